import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport `HARFixtures` puts in a server's place: answers from the file, and sends what
/// the mode sends to `network` (the server's own transport), keeping what came back.
struct HARTransport: ConveyTransport {
    let fixtures: HARFixtures
    /// Where requests the file does not answer go, in pass-through, record and capture modes.
    let network: any ConveyTransport
    /// The task and attempt of the exchange, when the pipeline said (inside `HARFixtures.scope`).
    let origin: ExchangeOrigin?

    /// The most body bytes kept per request and per response in an entry; the rest is counted, not kept.
    static let bodyLimit = 16 << 20

    func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        try Task.checkCancellation()
        let url = request.request.url
        guard fixtures.mode != .capture else { return try await capture(request, into: sink) }
        guard let key = HARRequestKey(method: request.request.method.rawValue, url: url.absoluteString) else {
            return try await unanswered(request, into: sink, reason: "only http and https requests can be answered from HAR")
        }
        let selection = fixtures.store.select(key, body: { Self.body(of: request, limit: HARBodyMatch.structuredLimit).data },
                                              contentType: request.request.fields["Content-Type"])
        switch selection {
        case .answer(let fixture):
            try await fixture.deliver(to: url, into: sink)
            return ExchangeMetrics()
        case .unmatched(let reason):
            return try await unanswered(request, into: sink, reason: reason)
        }
    }

    /// A request no entry answers: an error in replay mode, the network otherwise.
    private func unanswered(_ request: TransportRequest, into sink: any ResponseBodySink, reason: String) async throws -> ExchangeMetrics {
        switch fixtures.mode {
        case .replay:
            throw ConveyError.noRecordedAnswer(request: request.request.method.rawValue + " " + Redaction.standard.maskedURL(request.request.url),
                                               file: fixtures.file.path(percentEncoded: false), reason: reason)
        case .passThrough:
            return try await network.send(request, into: sink)
        case .record, .capture:
            return try await capture(request, into: sink)
        }
    }

    /// Sends `request` to the network, delivers what comes back to `sink` as it arrives, and
    /// appends the exchange to the file before returning (a cancelled exchange is not kept).
    private func capture(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        let startedAt = Date()
        let clock = ContinuousClock.now
        let tee = HARCaptureSink(sink, limit: Self.bodyLimit)
        var metrics = ExchangeMetrics()
        var failure: (any Error)?
        do {
            metrics = try await network.send(request, into: tee)
        } catch {
            failure = error
        }
        let elapsed = clock.duration(to: .now)
        let mapped = failure.map { TransportErrors.map($0, url: request.request.url, timeout: request.timeout) }
        if let mapped, mapped.isCancellation, let failure { throw failure }
        let kept = Self.keptFailure(mapped, fromSink: tee.failureFromSink)
        let captured = tee.captured
        let exchange = CapturedExchange(
            request: request.request, requestBody: nil, requestBodySize: 0, head: captured.head, responseBody: captured.body,
            responseBodySize: captured.total, metrics: metrics, startedAt: startedAt, elapsed: elapsed, origin: origin, failure: kept)
        let path = fixtures.file.path(percentEncoded: false)
        let privacy = fixtures.privacy
        let position = fixtures.store.count
        let fixture = try await HARAppender.append(to: path, comment: fixtures.includesSecrets ? HARPrivacy.secretsKeptComment : nil) { () throws(HARError) in
            var complete = exchange
            (complete.requestBody, complete.requestBodySize, complete.requestBodyNote) = Self.body(of: request, limit: Self.bodyLimit)
            let entry = HAREntry(complete, privacy: privacy, responseBodyLimit: Self.bodyLimit)
            return ([entry], try HARFixtureReader.fixture(of: entry, position: position, path: path))
        }
        if fixtures.mode == .record, let fixture { fixtures.store.add(fixture, answered: true) }
        if let failure { throw failure }
        return metrics
    }

    /// The failure an entry keeps: the network's, and the pipeline's size limit (so replay stops
    /// where the live exchange stopped); not another refusal of the pipeline's own (a redirect's
    /// body dropped, a stream's reader gone), which says nothing about the server.
    private static func keptFailure(_ mapped: (any Error)?, fromSink sinkFailure: (any Error)?) -> HAREntry.Failure? {
        guard let mapped else { return nil }
        let message = (mapped as? ConveyError)?.logDetail ?? (mapped as? HTTPError)?.logDetail ?? String(describing: mapped)
        switch mapped {
        case ConveyError.attemptTimedOut, ConveyError.totalTimedOut: return HAREntry.Failure(kind: "timedOut", message: message)
        case ConveyError.responseTooLarge: return HAREntry.Failure(kind: TransportFailure.tooLarge.rawValue, message: message)
        case _ where sinkFailure != nil: return nil
        case ConveyError.transport(let transportFailure, _, _, _): return HAREntry.Failure(kind: transportFailure.rawValue, message: message)
        default: return HAREntry.Failure(kind: TransportFailure.other.rawValue, message: message)
        }
    }

    /// The request's body, its size, and why it is not kept: in memory, or read from its file up to `limit`.
    private static func body(of request: TransportRequest, limit: Int) -> (data: Data?, size: Int64, note: String?) {
        if let body = request.request.body { return (body, Int64(body.count), nil) }
        guard let file = request.bodyFile else { return (nil, 0, nil) }
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
