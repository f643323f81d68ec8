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
    init?<Task: DownloadingTask>(task: Task, server: ConveyServer, idleTimeout: Duration, sizeLimit: Int64?) {
        let strategy = task.cacheStrategy
        guard server.storedConfiguration.cache != nil || strategy == .localOnly else { return nil }
        cache = server.storedConfiguration.cache
        self.strategy = strategy
        cachesAuthorizedResponses = task.cachesAuthorizedResponses
        credentials = server.storedConfiguration.redaction
        exchangeRules = ExchangeRules(server: ObjectIdentifier(server), limit: sizeLimit, timeout: idleTimeout)
        heuristic = server.storedConfiguration.heuristicFreshness
        // Upload tasks carry a body (possibly a file the request does not show): never coalesced.
        coalesces = !(task is any UploadingTask) && (task.configuration?.coalescesRequests ?? server.storedConfiguration.coalescesRequests)
        reporter = CacheExchangeReporter(task: task, server: server)
    }
}

/// The cache's step, after redirects (so each hop of a redirect chain is its own question, and a
/// stored 301 answers without the network) and before everything that reaches the network: each
/// hop is answered from the cache, the network through the steps below, or both
/// (`CacheCoordinator` has the rules). Only runs that keep their body in memory have it, on a
/// server with a cache or for a task insisting on one (`.localOnly`). Its answer goes up whole,
/// with how the cache answered (`CacheStatus`, kept on the response), and the run's observers
/// hear of it (`RunEvent.Kind.cacheOutcome`).
struct CacheStep: ChainStep {
    let policy: CachePolicy

    /// The cache's step for a run of `task` planned as `plan`, or `nil` when the cache takes no part.
    @ConveyActor
    init?<Task: DownloadingTask>(task: Task, plan: RunPlan) {
        guard plan.keepsBodyInMemory,
              let policy = CachePolicy(task: task, server: plan.server, idleTimeout: plan.idleTimeout, sizeLimit: plan.sizeLimit) else { return nil }
        self.policy = policy
    }

    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        let limit = context.plan.sizeLimit
        let answer = try await CacheCoordinator(policy: policy, attempt: context).respond(to: request.request, cancellation: request.cancellation) {
            sending, inTaskOfItsOwn in
            // A shared or background exchange runs in a task of its own, which only its own
            // cancellation stops (its last waiter leaving), never one run's stop.
            var forwarded = request
            forwarded.request = sending
            if inTaskOfItsOwn { forwarded.cancellation = .none }
            let exchange = try await next(forwarded, context)
            let data = try await exchange.body.collected(limit: limit, url: exchange.head.url)
            return (TransportResponse(head: exchange.head, data: data, metrics: exchange.metrics), exchange.tags)
        }
        await context.emit(.cacheOutcome(answer.status))
        var exchange = Exchange(request: answer.request, head: answer.response.head, body: .data(answer.response.data),
                                metrics: answer.response.metrics, tags: answer.tags)
        exchange.tags[CacheStatus.self] = answer.status
        return exchange
    }
}
