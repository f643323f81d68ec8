import Foundation

/// The sink for ordinary tasks: keeps the head and collects the body in memory, up to a limit.
///
/// Exceeding the limit throws `ConveyError.responseTooLarge` from `offer`, which stops the
/// transfer at once, so memory never holds more than the limit plus one chunk.
final class InMemoryBody: ResponseBodySink, @unchecked Sendable {
    private let lock = NSLock()
    private let limit: Int64?
    private let url: URL?
    private var head: ResponseHead?
    private var body = Data()

    /// A sink that fails once the decoded body passes `limit` bytes (`nil`: no limit).
    /// `url` names the request in the error.
    init(limit: Int64?, url: URL?) {
        self.limit = limit
        self.url = url
    }

    func receive(_ head: ResponseHead) throws {
        lock.withLock {
            self.head = head
            body.removeAll(keepingCapacity: true)
        }
        // Room for an announced body, up to the limit: a lying length costs nothing beyond it.
        if let announced = head.fields.first(named: "Content-Length").flatMap(Int64.init), announced > 0 {
            let capacity = min(announced, limit ?? announced, 64 << 20)
            lock.withLock { body.reserveCapacity(Int(capacity)) }
        }
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        try lock.withLock {
            if let limit, Int64(body.count) + Int64(bytes.count) > limit {
                throw ConveyError.responseTooLarge(SizeLimitFailure(part: .body, limit: limit, url: head?.url ?? url))
            }
            body.append(bytes.assumingMemoryBound(to: UInt8.self))
        }
        return true
    }

    /// Takes `response` as the one received, head and body, without copying the body: for a
    /// response already collected within the same limit (the cache's answer).
    func adopt(_ response: TransportResponse) {
        lock.withLock {
            head = response.head
            body = response.data
        }
    }

    /// The collected response. Throws `URLError(.badServerResponse)` when no head ever arrived.
    func response(metrics: ExchangeMetrics) throws -> TransportResponse {
        try lock.withLock {
            guard let head else { throw URLError(.badServerResponse, userInfo: url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:]) }
            return TransportResponse(head: head, data: body, metrics: metrics)
        }
    }
}
