import Foundation

/// Keeps every exchange that reaches the network as an entry of the HAR file, in `record` and
/// `capture` modes: an observer of the runs inside `HARFixtures.scope(_:)`, told of each exchange
/// on the wire as it ends, before the task sees its response. A cancelled exchange is not kept.
struct HARCaptureObserver: RunObserver {
    let fixtures: HARFixtures

    /// The most body bytes kept per request and per response in an entry; the rest is counted, not kept.
    static let bodyLimit = 16 << 20

    func observe(_ event: RunEvent) async throws {
        guard let wire = event.wire else { return }
        let metrics: ExchangeMetrics
        let head: ResponseHead?
        var kept: HAREntry.Failure?
        switch event.kind {
        case .bodyFinished(let response):
            (metrics, head) = (response.metrics, response.head)
        case .exchangeFailed(let error):
            if error.isCancellation { return }
            (metrics, head) = (ExchangeMetrics(), nil)
            kept = Self.keptFailure(error, endedBySink: wire.endedBySink)
        case .runStarted, .attemptStarted, .requestSent, .responseReceived, .redirectFollowed, .cacheOutcome, .cacheExchange,
             .attemptFinished, .retryScheduled, .credentialRefresh, .runFinished:
            return
        }
        let exchange = CapturedExchange(
            request: wire.request, requestBody: nil, requestBodySize: 0, head: head, responseBody: wire.keptBody,
            responseBodySize: wire.bodyBytes, metrics: metrics, startedAt: wire.startedAt, elapsed: wire.elapsed,
            taskType: String(describing: type(of: event.task)), attempt: event.attempt, failure: kept)
        let path = fixtures.file.path(percentEncoded: false)
        let privacy = fixtures.privacy
        let position = fixtures.store.count
        let fixture = try await HARAppender.append(to: path, comment: fixtures.includesSecrets ? HARPrivacy.secretsKeptComment : nil) { () throws(HARError) in
            var complete = exchange
            (complete.requestBody, complete.requestBodySize, complete.requestBodyNote) = HARRequestBody.read(wire.request, bodyFile: wire.bodyFile,
                                                                                                            limit: Self.bodyLimit)
            let entry = HAREntry(complete, privacy: privacy, responseBodyLimit: Self.bodyLimit)
            return ([entry], try HARFixtureReader.fixture(of: entry, position: position, path: path))
        }
        if fixtures.mode == .record, let fixture { fixtures.store.add(fixture, answered: true) }
    }

    /// The failure an entry keeps: the network's, and the pipeline's size limit (so replay stops
    /// where the live exchange stopped); not another refusal of the pipeline's own (a redirect's
    /// body dropped, a stream's reader gone), which says nothing about the server.
    private static func keptFailure(_ error: any Error, endedBySink: Bool) -> HAREntry.Failure? {
        let message = (error as? ConveyError)?.logDetail ?? (error as? HTTPError)?.logDetail ?? String(describing: error)
        switch error {
        case ConveyError.attemptTimedOut, ConveyError.totalTimedOut: return HAREntry.Failure(kind: "timedOut", message: message)
        case ConveyError.responseTooLarge: return HAREntry.Failure(kind: TransportFailure.tooLarge.rawValue, message: message)
        case _ where endedBySink: return nil
        case ConveyError.transport(let transportFailure, _, _, _): return HAREntry.Failure(kind: transportFailure.rawValue, message: message)
        default: return HAREntry.Failure(kind: TransportFailure.other.rawValue, message: message)
        }
    }
}
