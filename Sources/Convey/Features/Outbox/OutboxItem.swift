import Foundation

/// One request in an `Outbox`, as far as it has got: what it sends, how often it was tried,
/// and its state. A value: read `Outbox.items`, or observe `Outbox.changes()`, for newer ones.
public struct OutboxItem: Sendable, Identifiable {
    /// Where an item's delivery stands. Every item ends in exactly one of `delivered` and `failed`.
    public enum State: Sendable {
        /// Waiting for its first attempt, between attempts, or being sent.
        case pending
        /// A response arrived with a status the outbox accepts (2xx). `body` is the response
        /// body as received, except that a credential the attempt sent, when the server echoed it
        /// back, is replaced by `Redaction.mask`.
        case delivered(statusCode: Int, body: Data)
        /// Delivery ended without success: an `HTTPError` for a status the outbox does not retry,
        /// `ConveyError.attemptsExhausted` or `.expired`, or another final error. The item is
        /// kept until the app retries or drops it.
        case failed(any Error)
    }

    /// The item's ID: time-ordered, so sorting IDs gives the enqueue order.
    public let id: String
    /// The request method.
    public let method: HTTPMethod
    /// The absolute URL the item is sent to.
    public let url: URL
    /// The `Idempotency-Key` value every attempt sends.
    public let idempotencyKey: String
    /// The type name of the task that was enqueued.
    public let taskName: String
    /// When the item was enqueued.
    public let enqueuedAt: Date
    /// The attempts started so far, in every process.
    public let attempts: Int
    /// When the next attempt may start (a retry wait or `Retry-After`), or `nil` for at once.
    public let nextAttemptAt: Date?
    /// What went wrong last, masked with `Redaction.standard`, or `nil`.
    public let lastError: String?
    /// Where delivery stands.
    public let state: State

    /// Whether the item is delivered or failed.
    public var isFinished: Bool {
        if case .pending = state { return false }
        return true
    }

    /// The delivered response's body decoded as `type` (JSON, or raw `Data`, or UTF-8 `String`).
    /// Throws the item's error when it failed, `ConveyError.decodingFailed` when the body does
    /// not decode, and `ConveyError.notDelivered` while it is pending.
    public func payload<Payload: Decodable>(as type: Payload.Type = Payload.self,
                                            decoder: JSONDecoder = JSONCoding.makeDecoder()) throws -> Payload {
        switch state {
        case .pending: throw ConveyError.notDelivered("item \(id) is still pending")
        case .failed(let error): throw error
        case .delivered(_, let body): return try PayloadDecoding.decode(type, from: body, using: decoder, url: url)
        }
    }
}
