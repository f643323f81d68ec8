import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Shows exchanges besides the final one of a task's attempt — each redirect `RedirectStage`
/// followed, a 304 that confirmed another representation, a stale-while-revalidate refresh — in
/// echo and recordings like any attempt; a background refresh also reaches the server's
/// `didFinish(task:response:error:)`.
struct CacheExchangeReporter: Sendable {
    private let deliver: @ConveyActor @Sendable (OutgoingRequest, Result<TransportResponse, any Error>, CacheStatus, Date, Duration, Int) async -> Void

    /// A reporter for exchanges made on behalf of `task` against `server`.
    init<Task: DownloadingTask>(task: Task, server: ConveyServer) {
        deliver = { request, result, status, startedAt, duration, attemptNumber in
            var exchange: ServerResponse<Data>?
            if case .success(let sent) = result {
                var response = ServerResponse(payload: sent.data, data: sent.data, request: request, head: sent.head,
                                              startedAt: startedAt, duration: duration, attemptNumber: attemptNumber)
                response.cacheStatus = status
                exchange = response
            }
            Echo.attempt(of: task, server: server, request: request, exchange: exchange, error: result.failure,
                         attemptNumber: attemptNumber, duration: duration)
            if status == .backgroundRefresh { await server.didFinish(task: task, response: exchange, error: result.failure) }
        }
    }

    /// Echoes, records and (for a background refresh) hands to the server's hook one exchange,
    /// made during attempt `attemptNumber` of the run.
    @ConveyActor
    func report(_ request: OutgoingRequest, _ result: Result<TransportResponse, any Error>, status: CacheStatus, startedAt: Date, until end: Date,
                attemptNumber: Int = 1) async {
        let duration = Duration.milliseconds(Int64(max(0, end.timeIntervalSince(startedAt)) * 1000))
        await deliver(request, result, status, startedAt, duration, attemptNumber)
    }
}
