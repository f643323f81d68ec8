import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The stage `HARFixtures.scope(_:)` puts nearest the wire, after the app's exchange steps: a
/// request an entry of the file answers gets that entry's answer, delivered as a transport would
/// deliver it; any other goes on to the network in `passThrough` and `record` modes (where
/// `HARCaptureObserver` keeps what comes back), and fails with `ConveyError.noRecordedAnswer` in
/// `replay` mode.
struct HARReplayStage: ExchangeStage {
    let fixtures: HARFixtures

    func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext, next: ExchangeChain.Rest) async throws -> SentExchange {
        try Task.checkCancellation()
        let request = hop.request
        guard let key = HARRequestKey(method: request.method.rawValue, url: request.url.absoluteString) else {
            return try await unanswered(hop, into: sink, attempt: attempt, next: next, reason: "only http and https requests can be answered from HAR")
        }
        let selection = fixtures.store.select(key, body: { HARRequestBody.read(request, bodyFile: hop.bodyFile, limit: HARBodyMatch.structuredLimit).data },
                                              contentType: request.fields["Content-Type"])
        switch selection {
        case .answer(let fixture):
            try await fixture.deliver(to: request.url, into: sink)
            return SentExchange(request: request, metrics: ExchangeMetrics())
        case .unmatched(let reason):
            return try await unanswered(hop, into: sink, attempt: attempt, next: next, reason: reason)
        }
    }

    /// A request no entry answers: an error in replay mode, the network otherwise.
    private func unanswered(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext, next: ExchangeChain.Rest,
                            reason: String) async throws -> SentExchange {
        guard fixtures.mode != .replay else {
            throw ConveyError.noRecordedAnswer(request: hop.request.method.rawValue + " " + Redaction.standard.maskedURL(hop.request.url),
                                               file: fixtures.file.path(percentEncoded: false), reason: reason)
        }
        return try await next.send(hop, into: sink, attempt: attempt)
    }
}

/// A request's body as a HAR entry keeps it: in memory, or read from its file up to a limit.
enum HARRequestBody {
    /// The body, its size, and why it is not kept (a file too large to read) when it is not.
    static func read(_ request: OutgoingRequest, bodyFile: URL?, limit: Int) -> (data: Data?, size: Int64, note: String?) {
        if let body = request.body { return (body, Int64(body.count), nil) }
        guard let file = bodyFile else { return (nil, 0, nil) }
        let path = file.path(percentEncoded: false)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? -1
        guard size >= 0, size <= Int64(limit), let handle = FileHandle(forReadingAtPath: path) else {
            return (nil, size, "The body was streamed from a file of \(size < 0 ? "unknown size" : "\(size) bytes") and not kept.")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: limit)) ?? Data()
        return (data, Int64(data.count), nil)
    }
}
