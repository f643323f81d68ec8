import Foundation

/// How the cache takes part in a run, resolved once with its `RunPlan`: for runs that keep the
/// body in memory, when the server has a cache or the task asks for `.localOnly`.
struct CachePolicy: Sendable {
    /// What besides the request decides an exchange's outcome (the server, the size limit, the
    /// idle timeout): only runs under the same rules share an exchange.
    struct ExchangeRules: Sendable {
        let server: ObjectIdentifier
        let limit: Int64?
        let timeout: Duration
    }

    let cache: DataCache?
    let strategy: CacheStrategy
    let cachesAuthorizedResponses: Bool
    /// The credential fields beyond the standard ones: the server's `redaction`.
    let credentials: Redaction
    let exchangeRules: ExchangeRules
    let heuristic: HeuristicFreshness?
    let coalesces: Bool
    /// Echoes the exchanges the cache makes besides the attempt's own.
    let reporter: CacheExchangeReporter

    /// The policy of a run of `task`, or `nil` when the cache takes no part: the server has none
    /// and the task does not insist on one (`.localOnly`, which then fails as not cached).
    @ConveyActor
    init?<Task: DownloadingTask>(task: Task, server: ConveyServer, idleTimeout: Duration, sizeLimit: Int64?, attemptLabel: OutboxAttemptLabel?) {
        let strategy = task.cacheStrategy
        guard server.configuration.cache != nil || strategy == .localOnly else { return nil }
        cache = server.configuration.cache
        self.strategy = strategy
        cachesAuthorizedResponses = task.cachesAuthorizedResponses
        credentials = server.configuration.redaction
        exchangeRules = ExchangeRules(server: ObjectIdentifier(server), limit: sizeLimit, timeout: idleTimeout)
        heuristic = server.configuration.heuristicFreshness
        // Upload tasks carry a body (possibly a file the request does not show): never coalesced.
        coalesces = !(task is any UploadingTask) && (task.configuration?.coalescesRequests ?? server.configuration.coalescesRequests)
        reporter = CacheExchangeReporter(task: task, server: server, attemptLabel: attemptLabel)
    }
}

/// The cache's stage, between redirects and the transport: each hop is answered from the cache,
/// the network through the next stage, or both (`CacheCoordinator` has the rules). The answer goes
/// to the sink whole, its body handed over where the sink keeps it in memory.
struct CacheStage<Next: ExchangeStage>: ExchangeStage {
    let policy: CachePolicy
    let next: Next

    func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext) async throws -> SentExchange {
        let limit = attempt.plan.sizeLimit
        let bodyFile = hop.bodyFile
        let answer = try await CacheCoordinator(policy: policy).respond(to: hop.request, cancellation: attempt.cancellation) { [next] sending, inTaskOfItsOwn in
            // A shared or background exchange runs in a task of its own, which only its own
            // cancellation stops (its last waiter leaving), never one run's stop.
            var network = attempt
            if inTaskOfItsOwn { network.cancellation = .none }
            let body = InMemoryBody(limit: limit, url: sending.url)
            let sent = try await next.send(Hop(request: sending, bodyFile: bodyFile), into: body, attempt: network)
            return try body.response(metrics: sent.metrics)
        }
        try await sink.takeWhole(answer.response)
        return SentExchange(request: answer.request, metrics: answer.response.metrics, cacheStatus: answer.status)
    }
}
