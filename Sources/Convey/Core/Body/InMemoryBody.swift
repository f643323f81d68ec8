import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sink for bodies kept in memory: keeps the head and collects the body, up to a limit.
///
/// Exceeding the limit throws `ConveyError.responseTooLarge` from `offer`, which stops the
/// transfer at once, so memory never holds more than the limit plus one chunk. A redirect the run
/// will follow keeps no body: its bytes are dropped, and past `Redirect.discardedBodyLimit` the
/// transfer ends (`endedRedirectBody`), the redirect being followed all the same.
final class InMemoryBody: ResponseBodySink {
    private let limit: Int64?
    private let url: URL?
    private let followsRedirects: Bool
    private let received = InlineLocked(Received())

    /// What arrived so far.
    private struct Received: Sendable {
        var head: ResponseHead?
        var body = Data()
        /// Whether the head is a redirect the run follows, and how much of its body was dropped.
        var dropping = false
        var dropped = 0
        var endedRedirectBody = false
    }

    /// Thrown from `offer` to end a followed redirect's transfer whose body is too long to drop.
    struct RedirectBodyEnded: Error {}

    /// A sink that fails once the decoded body passes `limit` bytes (`nil`: no limit).
    /// `url` names the request in the error; `followsRedirects` drops the body of a redirect.
    init(limit: Int64?, url: URL?, followsRedirects: Bool = false) {
        self.limit = limit
        self.url = url
        self.followsRedirects = followsRedirects
    }

    func receive(_ head: ResponseHead) throws {
        let dropping = followsRedirects && Redirect.isFollowed(head)
        // Room for an announced body, up to the limit: a lying length costs nothing beyond it.
        let announced = dropping ? 0 : head.contentLength ?? 0
        received.withLock { received in
            received.head = head
            received.dropping = dropping
            received.body.removeAll(keepingCapacity: true)
            if announced > 0 { received.body.reserveCapacity(Int(min(announced, limit ?? announced, 64 << 20))) }
        }
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        try received.withLock { received in
            if received.dropping {
                received.dropped += bytes.count
                if received.dropped > Redirect.discardedBodyLimit {
                    received.endedRedirectBody = true
                    throw RedirectBodyEnded()
                }
                return
            }
            if let limit, Int64(received.body.count) + Int64(bytes.count) > limit {
                throw ConveyError.responseTooLarge(limit: limit, url: received.head?.url ?? url, isHead: false)
            }
            received.body.append(bytes.assumingMemoryBound(to: UInt8.self))
        }
        return true
    }

    /// Whether the sink ended a followed redirect's transfer because its body was too long to drop.
    var endedRedirectBody: Bool { received.withLock { $0.endedRedirectBody } }

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
