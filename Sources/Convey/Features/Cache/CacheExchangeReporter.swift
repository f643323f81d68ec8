import Foundation

/// Shows exchanges besides the final one of a task's attempt — a 304 that confirmed another
/// representation, a stale-while-revalidate refresh — to the run's observers, so echo and
/// recordings show them like any attempt; a background refresh also reaches the server's
/// `didFinish(task:response:error:)`.
struct CacheExchangeReporter: Sendable {
    /// The task, for the server's hook after a background refresh.
    private let task: any DownloadingTask
    private let server: ConveyServer

    /// A reporter for exchanges made on behalf of `task` against `server`.
    @ConveyActor
    init<Task: DownloadingTask>(task: Task, server: ConveyServer) {
        self.task = task
        self.server = server
    }

    /// Tells the observers of `attempt` of one exchange and, for a background refresh, hands it
    /// to the server's hook.
    func report(_ request: OutgoingRequest, _ result: Result<TransportResponse, any Error>, status: CacheStatus, startedAt: Date, until end: Date,
                attempt: StepContext) async {
        let duration = Duration.milliseconds(Int64(max(0, end.timeIntervalSince(startedAt)) * 1000))
        var exchange: Exchange?
        var failure: (any Error)?
        switch result {
        case .success(let sent):
            var made = Exchange(request: request, head: sent.head, body: .data(sent.data), metrics: sent.metrics,
                                startedAt: startedAt, duration: duration, attemptNumber: attempt.attempt)
            made.tags[CacheStatus.self] = status
            exchange = made
        case .failure(let error):
            failure = error
        }
        let response = exchange.map { ServerResponse(payload: $0.data, exchange: $0) }
        await attempt.emit(.cacheExchange(request, response, error: failure, duration: duration))
        if status == .backgroundRefresh {
            await server.didFinish(task: task, response: response, error: failure)
        }
    }
}
