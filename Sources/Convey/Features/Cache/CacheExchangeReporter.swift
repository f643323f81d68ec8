import Foundation

/// Shows exchanges besides the final one of a task's attempt — a 304 that confirmed another
/// representation, a stale-while-revalidate refresh — in echo and recordings like any attempt; a
/// background refresh also reaches the server's `didFinish(task:response:error:)`.
struct CacheExchangeReporter: Sendable {
    private let echo: EchoPlan
    /// The task, for the server's hook after a background refresh.
    private let task: any DownloadingTask
    private let server: ConveyServer

    /// A reporter for exchanges made on behalf of `task` against `server` (`attemptLabel` when
    /// the run is an outbox item's attempt).
    @ConveyActor
    init<Task: DownloadingTask>(task: Task, server: ConveyServer, attemptLabel: OutboxAttemptLabel?) {
        echo = EchoPlan(task: task, server: server, asksStyleForData: false, attemptLabel: attemptLabel)
        self.task = task
        self.server = server
    }

    /// Echoes, records and (for a background refresh) hands to the server's hook one exchange,
    /// made during attempt `attemptNumber` of the run.
    func report(_ request: OutgoingRequest, _ result: Result<TransportResponse, any Error>, status: CacheStatus, startedAt: Date, until end: Date,
                attemptNumber: Int = 1) async {
        let duration = Duration.milliseconds(Int64(max(0, end.timeIntervalSince(startedAt)) * 1000))
        var exchange: Exchange?
        if case .success(let sent) = result {
            exchange = Exchange(request: request, head: sent.head, body: sent.data, metrics: sent.metrics, cacheStatus: status,
                                startedAt: startedAt, duration: duration, attemptNumber: attemptNumber)
        }
        Echo.record(echo, style: echo.style, request: request, exchange: exchange, error: result.failure,
                    attemptNumber: attemptNumber, duration: duration)
        if status == .backgroundRefresh {
            let response = exchange.map { ServerResponse(payload: $0.body, exchange: $0) }
            await server.didFinish(task: task, response: response, error: result.failure)
        }
    }
}
