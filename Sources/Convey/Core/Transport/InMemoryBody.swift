import Foundation

/// The sink for bodies kept in memory: keeps the head and collects the body, up to a limit.
///
/// Exceeding the limit throws `ConveyError.responseTooLarge` from `offer`, which stops the
/// transfer at once, so memory never holds more than the limit plus one chunk.
final class InMemoryBody: ResponseBodySink {
    private let limit: Int64?
    private let url: URL?
    private let received = InlineLocked(Received())

    /// What arrived so far.
    private struct Received: Sendable {
        var head: ResponseHead?
        var body = Data()
    }

    /// A sink that fails once the decoded body passes `limit` bytes (`nil`: no limit).
    /// `url` names the request in the error.
    init(limit: Int64?, url: URL?) {
        self.limit = limit
        self.url = url
    }

    func receive(_ head: ResponseHead) throws {
        // Room for an announced body, up to the limit: a lying length costs nothing beyond it.
        let announced = head.contentLength ?? 0
        received.withLock { received in
            received.head = head
            received.body.removeAll(keepingCapacity: true)
            if announced > 0 { received.body.reserveCapacity(Int(min(announced, limit ?? announced, 64 << 20))) }
        }
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        try received.withLock { received in
            if let limit, Int64(received.body.count) + Int64(bytes.count) > limit {
                throw ConveyError.responseTooLarge(limit: limit, url: received.head?.url ?? url, isHead: false)
            }
            received.body.append(bytes.assumingMemoryBound(to: UInt8.self))
        }
        return true
    }

    /// The collected head and body. Throws `URLError(.badServerResponse)` when no head ever arrived.
    func collected() throws -> (head: ResponseHead, body: Data) {
        try received.withLock { received in
            guard let head = received.head else {
                throw URLError(.badServerResponse, userInfo: url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:])
            }
            return (head, received.body)
        }
    }

    /// The collected response. Throws `URLError(.badServerResponse)` when no head ever arrived.
    func response(metrics: ExchangeMetrics) throws -> TransportResponse {
        let (head, body) = try collected()
        return TransportResponse(head: head, data: body, metrics: metrics)
    }
}

extension InMemoryBody: WholeResponseSink {
    var held: (head: ResponseHead, body: Data)? {
        received.withLock { received in received.head.map { ($0, received.body) } }
    }

    /// Takes a response already in memory (the cache's answer) as the one received, without
    /// copying its body, within the same limit.
    func take(_ response: TransportResponse) throws {
        if let limit, Int64(response.data.count) > limit {
            throw ConveyError.responseTooLarge(limit: limit, url: response.head.url, isHead: false)
        }
        received.withLock { received in
            received.head = response.head
            received.body = response.data
        }
    }
}
