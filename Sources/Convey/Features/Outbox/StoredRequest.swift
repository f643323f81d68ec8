import Foundation

/// What an item's request file records besides its body: everything needed to send it again,
/// in this process or after a restart, and nothing that is a credential (`OutboxCredentials`).
struct StoredRequest: Codable, Sendable, Hashable {
    /// The method, such as `POST`.
    var method: String
    /// The absolute URL, without userinfo or credential query parameters.
    var url: URL
    /// The task's `path`, for the server's `headers(for:)` and for people.
    var path: String
    /// The task's own header fields in order, credentials and the idempotency key left out.
    var fields: [Header]
    /// The `Idempotency-Key` value every attempt sends.
    var idempotencyKey: String
    /// The body's `Content-Type`, when it has a body.
    var contentType: String?
    /// The body's `Content-Encoding`, when it was compressed.
    var contentEncoding: String?
    /// When the item was enqueued.
    var enqueuedAt: Date
    /// The type name of the task that was enqueued, for echo, records and people.
    var taskName: String
}

/// An item's state file: where its delivery stands. A missing state file means a new item:
/// pending, never tried. The response body a delivered item keeps, and the body of an HTTP
/// error a failed item keeps, are the file's bytes part.
struct StoredState: Codable, Sendable, Hashable {
    enum Phase: String, Codable, Sendable {
        case pending, delivered, failed
    }

    var phase: Phase = .pending
    /// Every attempt started, in every process.
    var attempts = 0
    /// The attempts that count toward the retry policy's limit: those that could reach the
    /// server (a failure to connect at all does not count, so hours offline never fail an item).
    var countedAttempts = 0
    /// When the item last became pending (enqueued, or retried by hand): its expiry counts from here.
    var pendingSince: Date
    /// When the latest attempt started.
    var lastAttemptAt: Date?
    /// The earliest time of the next attempt (a retry wait, `Retry-After`), or `nil` for at once.
    var notBefore: Date?
    /// What went wrong last, masked with `Redaction.standard`.
    var lastError: String?
    /// When the item was delivered or failed.
    var finishedAt: Date?
    /// A delivered item's response status.
    var statusCode: Int?
    /// A failed item's error.
    var failure: StoredFailure?

    init(pendingSince: Date) {
        self.pendingSince = pendingSince
    }
}

/// A failed item's error in a form that survives a restart: HTTP, transport and timeout errors
/// come back as the same typed errors; the outbox's own failures as `ConveyError`'s outbox cases.
struct StoredFailure: Codable, Sendable, Hashable {
    /// How a timeout's `reason` names which limit fired (the file format keeps the words it had).
    static let attemptTimeout = "attempt"
    static let totalTimeout = "total"

    enum Kind: String, Codable, Sendable {
        case http, transport, timeout, attemptsExhausted, expired, other
    }

    var kind: Kind
    /// What happened, masked with `Redaction.standard`.
    var message: String
    var statusCode: Int?
    /// An HTTP error's response fields, credentials left out.
    var headers: [Header]?
    var url: URL?
    var method: String?
    var transportKind: String?
    var code: Int?
    var reason: String?
    var timeoutMilliseconds: Int64?
    var attempts: Int?

    /// The failure of `error`, and the body worth keeping with it (an HTTP error's).
    init(_ error: any Error) {
        message = Redaction.standard.maskedText(String(describing: error))
        switch error {
        case let http as HTTPError:
            kind = .http
            statusCode = http.statusCode
            headers = http.headers.sorted { $0.key < $1.key }
                .filter { !CrossOriginCredentials.isCredential($0.key, .standard) && $0.key.caseInsensitiveCompare("Set-Cookie") != .orderedSame }
                .map { Header(name: $0.key, value: $0.value) }
            url = http.url
            method = http.method.rawValue
        case ConveyError.transport(let failure, let failedURL, let failureCode, let failureReason):
            kind = .transport
            transportKind = failure.rawValue
            code = failureCode
            reason = Redaction.standard.maskedText(failureReason)
            url = failedURL
        case ConveyError.attemptTimedOut(let limit, let failedURL):
            kind = .timeout
            timeoutMilliseconds = Int64(limit / .milliseconds(1))
            reason = Self.attemptTimeout
            url = failedURL
        case ConveyError.totalTimedOut(let limit, let failedURL):
            kind = .timeout
            timeoutMilliseconds = Int64(limit / .milliseconds(1))
            reason = Self.totalTimeout
            url = failedURL
        case ConveyError.attemptsExhausted(let attempts, let lastError):
            kind = .attemptsExhausted
            self.attempts = attempts
            reason = lastError
        case ConveyError.expired(let lastError):
            kind = .expired
            reason = lastError
        default:
            kind = .other
        }
    }

    /// The typed error again; `body` is what the file kept of an HTTP error's body.
    func error(body: Data) -> any Error {
        switch kind {
        case .http:
            return HTTPError(statusCode: statusCode ?? 0, body: body,
                             headers: Dictionary((headers ?? []).map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first }),
                             url: url, method: HTTPMethod(rawValue: method ?? "POST"))
        case .transport:
            let transportKind = transportKind.flatMap(TransportFailure.init(rawValue:)) ?? .other
            return ConveyError.transport(transportKind, url: url, code: code ?? 0, reason: reason ?? message)
        case .timeout:
            let limit = Duration.milliseconds(timeoutMilliseconds ?? 0)
            return reason == Self.totalTimeout ? ConveyError.totalTimedOut(limit: limit, url: url) : ConveyError.attemptTimedOut(limit: limit, url: url)
        case .attemptsExhausted:
            return ConveyError.attemptsExhausted(attempts: attempts ?? 0, lastError: reason ?? message)
        case .expired:
            return ConveyError.expired(lastError: reason)
        case .other:
            return ConveyError.notDelivered(message)
        }
    }
}
