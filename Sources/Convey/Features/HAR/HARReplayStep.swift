import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers from a HAR file (`HARFixtures.scope(_:)`), in the chain where the cache answers, after
/// redirects and before everything that reaches the network: a request an entry of the file
/// answers gets that entry's answer, marked as replayed (`HARReplayed`), and nothing below runs
/// for it (neither the app's exchange steps nor the transport: nothing went on the wire). Any
/// other goes on to the network in `passThrough` and `record` modes (where `HARCaptureStep`
/// keeps what comes back), and fails with `ConveyError.noRecordedAnswer` in `replay` mode.
struct HARReplayStep: ChainStep {
    let fixtures: HARFixtures

    /// The replay of `fixtures`, or `nil` in capture mode, which only records.
    init?(fixtures: HARFixtures) {
        guard fixtures.mode != .capture else { return nil }
        self.fixtures = fixtures
    }

    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        try Task.checkCancellation()
        let sent = request.request
        guard let key = HARRequestKey(method: sent.method.rawValue, url: sent.url.absoluteString) else {
            return try await unanswered(request, context: context, next: next, reason: "only http and https requests can be answered from HAR")
        }
        let selection = fixtures.store.select(key, body: { HARRequestBody.read(sent, bodyFile: request.bodyFile, limit: HARBodyMatch.structuredLimit).data },
                                              contentType: sent.fields["Content-Type"])
        switch selection {
        case .answer(let fixture):
            var exchange = try fixture.answer(to: sent, timeout: context.plan.idleTimeout)
            exchange.tags[HARReplayed.self] = fixtures.file.lastPathComponent
            return exchange
        case .unmatched(let reason):
            return try await unanswered(request, context: context, next: next, reason: reason)
        }
    }

    /// A request no entry answers: an error in replay mode, the network otherwise.
    private func unanswered(_ request: TransportRequest, context: StepContext, next: ChainNext, reason: String) async throws -> Exchange {
        guard fixtures.mode != .replay else {
            throw ConveyError.noRecordedAnswer(request: request.request.method.rawValue + " " + Redaction.standard.maskedURL(request.request.url),
                                               file: fixtures.file.path(percentEncoded: false), reason: reason)
        }
        return try await next(request, context)
    }
}

/// Marks a response a HAR file answered in place of the network: the file's name, which echo shows.
enum HARReplayed: RunValueKey {
    typealias Value = String
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
