import Foundation

extension StepContext {
    /// The exchange `send` makes for `request`, told to the run's observers when anyone watches:
    /// the request sent, the response's head, then its body's end (or the failure), from the task
    /// that sends it. What the last step before the wire does: the transport's, and a WebSocket's
    /// upgrade in its place.
    func observingExchange(of request: TransportRequest, _ send: () async throws -> Exchange) async throws -> Exchange {
        guard isObserved else { return try await send() }
        let startedAt = Date()
        let clock = ContinuousClock.now
        await emit(.requestSent(request.request))
        var exchange: Exchange
        do {
            exchange = try await send()
        } catch {
            await emit(.exchangeFailed(error))
            throw error
        }
        await emit(.responseReceived(exchange.head))
        exchange.startedAt = startedAt
        switch exchange.body {
        case .data:
            exchange.duration = clock.duration(to: .now)
            await emit(.bodyFinished(Self.finished(exchange)))
        case .stream(let source):
            let sent = exchange
            let context = self
            exchange.body = .stream(ObservedBody(source, chunk: { _ in }, end: { error in
                if let error {
                    await context.emit(.exchangeFailed(error))
                } else {
                    var finished = sent
                    finished.metrics = source.metrics ?? finished.metrics
                    finished.duration = clock.duration(to: .now)
                    await context.emit(.bodyFinished(Self.finished(finished)))
                }
            }))
        }
        return exchange
    }

    /// The exchange as `bodyFinished` shows it: its body is not repeated there.
    private static func finished(_ exchange: Exchange) -> ServerResponse<Data> {
        var shown = exchange
        shown.body = .empty
        return ServerResponse(payload: Data(), exchange: shown)
    }
}
