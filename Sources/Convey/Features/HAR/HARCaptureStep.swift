import Foundation

/// Keeps every exchange that reaches the network as an entry of the HAR file, in `record` and
/// `capture` modes (`HARFixtures.scope(_:)`): the step nearest the transport, so it keeps each
/// request exactly as it went out and the response as it came back. A body in memory is kept at
/// once; a streamed body is teed as the top reads it, and its entry written when it ends, with
/// the failure it ended in, so that a replay of the file fails where the live exchange failed. A
/// cancelled exchange, or a body its reader left, is not kept.
struct HARCaptureStep: ChainStep {
    let fixtures: HARFixtures

    /// The most body bytes kept per request and per response in an entry; the rest is counted, not kept.
    static let bodyLimit = 16 << 20

    /// The capture of `fixtures`, or `nil` in modes that do not write the file.
    init?(fixtures: HARFixtures) {
        guard fixtures.mode == .record || fixtures.mode == .capture else { return nil }
        self.fixtures = fixtures
    }

    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        let startedAt = Date()
        let clock = ContinuousClock.now
        let taskType = RunLabel.taskName(of: context.run.taskType, start: context.run.start)
        var captured = CapturedExchange(request: request.request, requestBody: nil, requestBodySize: 0, head: nil, responseBody: Data(),
                                        responseBodySize: 0, metrics: ExchangeMetrics(), startedAt: startedAt, elapsed: .zero,
                                        taskType: taskType, attempt: context.attempt, failure: nil)
        let exchange: Exchange
        do {
            exchange = try await next(request, context)
        } catch {
            if !error.isCancellation {
                captured.elapsed = clock.duration(to: .now)
                captured.failure = Self.keptFailure(error)
                try? await keep(captured, bodyFile: request.bodyFile)
            }
            throw error
        }
        captured.head = exchange.head
        captured.metrics = exchange.metrics
        switch exchange.body {
        case .data(let data):
            captured.responseBody = data.prefix(Self.bodyLimit)
            captured.responseBodySize = Int64(data.count)
            captured.elapsed = clock.duration(to: .now)
            try? await keep(captured, bodyFile: request.bodyFile)
            return exchange
        case .stream(let source) where exchange.head.statusCode == 101 && context.run[WebSocketHandoff.self] != nil:
            return keepWebSocket(exchange, source: source, captured: captured, context: context, clock: clock, bodyFile: request.bodyFile)
        case .stream(let source):
            let kept = KeptBody(limit: Self.bodyLimit)
            var teed = exchange
            let bodyFile = request.bodyFile
            let captured = captured
            teed.body = .stream(ObservedBody(source, chunk: { kept.add($0) }, end: { error in
                if let error, error.isCancellation { return }
                var ended = captured
                (ended.responseBody, ended.responseBodySize) = kept.taken
                ended.metrics = source.metrics ?? ended.metrics
                ended.elapsed = clock.duration(to: .now)
                ended.failure = error.map(Self.keptFailure)
                try? await keep(ended, bodyFile: bodyFile)
            }))
            return teed
        }
    }

    /// A WebSocket's handshake: its entry keeps the connection's messages (`_webSocketMessages`),
    /// which the connection tells the tap this adds to the run's message taps, not its raw bytes,
    /// and is written when the connection ends, however it ends.
    private func keepWebSocket(_ exchange: Exchange, source: any BodySource, captured: CapturedExchange, context: StepContext,
                               clock: ContinuousClock.Instant, bodyFile: URL?) -> Exchange {
        let messages = HARWebSocketMessages()
        var taps = context.run[WebSocketMessageTaps.self] ?? [:]
        taps[ObjectIdentifier(messages)] = messages
        context.run[WebSocketMessageTaps.self] = taps
        var kept = exchange
        kept.body = .stream(ObservedBody(source, chunk: { _ in }, end: { error in
            var ended = captured
            ended.webSocketMessages = messages.kept
            ended.metrics = source.metrics ?? ended.metrics
            ended.elapsed = clock.duration(to: .now)
            if let error, !error.isCancellation { ended.failure = Self.keptFailure(error) }
            try? await keep(ended, bodyFile: bodyFile)
        }))
        return kept
    }

    /// Appends the entry for `exchange` to the file; in record mode, it answers later requests too.
    private func keep(_ exchange: CapturedExchange, bodyFile: URL?) async throws {
        let path = fixtures.file.path(percentEncoded: false)
        let privacy = fixtures.privacy
        let position = fixtures.store.count
        let fixture = try await HARAppender.append(to: path, comment: fixtures.includesSecrets ? HARPrivacy.secretsKeptComment : nil) { () throws(HARError) in
            var complete = exchange
            (complete.requestBody, complete.requestBodySize, complete.requestBodyNote) = HARRequestBody.read(exchange.request, bodyFile: bodyFile,
                                                                                                            limit: Self.bodyLimit)
            let entry = HAREntry(complete, privacy: privacy, responseBodyLimit: Self.bodyLimit)
            return ([entry], try HARFixtureReader.fixture(of: entry, position: position, path: path))
        }
        if fixtures.mode == .record, let fixture { fixtures.store.add(fixture, answered: true) }
    }

    /// The failure an entry keeps, so that a replay fails where the live exchange failed: a
    /// timeout, the pipeline's size limit, a transport failure of its kind, anything else as `other`.
    private static func keptFailure(_ error: any Error) -> HAREntry.Failure {
        let message = (error as? ConveyError)?.logDetail ?? (error as? HTTPError)?.logDetail ?? String(describing: error)
        switch error {
        case ConveyError.attemptTimedOut, ConveyError.totalTimedOut: return HAREntry.Failure(kind: "timedOut", message: message)
        case ConveyError.responseTooLarge: return HAREntry.Failure(kind: TransportFailure.tooLarge.rawValue, message: message)
        case ConveyError.transport(let transportFailure, _, _, _): return HAREntry.Failure(kind: transportFailure.rawValue, message: message)
        default: return HAREntry.Failure(kind: TransportFailure.other.rawValue, message: message)
        }
    }
}

/// The start of a body teed for an entry, up to a limit, and how many bytes passed in all.
private final class KeptBody: Sendable {
    private let limit: Int
    private let state = InlineLocked((body: Data(), bytes: Int64(0)))

    init(limit: Int) {
        self.limit = limit
    }

    func add(_ chunk: Data) {
        state.withLock { state in
            state.bytes += Int64(chunk.count)
            let room = limit - state.body.count
            if room > 0 { state.body.append(chunk.prefix(room)) }
        }
    }

    var taken: (Data, Int64) { state.value }
}
