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

/// The cache's part in runs: a run that keeps its body in memory, on a server with a cache (or
/// insisting on one with `.localOnly`), goes through a `CacheStage` between redirects and the wire.
struct CacheFeature: RunFeature {
    @ConveyActor
    func join<Task: DownloadingTask>(_ parts: inout RunParts, task: Task, setup: RunSetup) {
        guard setup.keepsBodyInMemory,
              let policy = CachePolicy(task: task, server: setup.server, idleTimeout: setup.idleTimeout, sizeLimit: setup.sizeLimit) else { return }
        parts.featureStages.append(CacheStage(policy: policy))
    }
}

/// The cache's stage, between redirects and the rest of the chain: each hop is answered from the
/// cache, the network through the next stages, or both (`CacheCoordinator` has the rules). The
/// answer goes to the sink whole, its body handed over where the sink keeps it in memory, and the
/// run's observers hear how the cache answered (`RunEvent.Kind.cacheOutcome`).
struct CacheStage: ExchangeStage {
    let policy: CachePolicy

    func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext, next: ExchangeChain.Rest) async throws -> SentExchange {
        let limit = attempt.plan.sizeLimit
        let answer = try await CacheCoordinator(policy: policy, attempt: attempt).respond(to: hop.request, cancellation: attempt.cancellation) {
            sending, inTaskOfItsOwn in
            // A shared or background exchange runs in a task of its own, which only its own
            // cancellation stops (its last waiter leaving), never one run's stop.
            var network = attempt
            if inTaskOfItsOwn { network.cancellation = .none }
            let body = InMemoryBody(limit: limit, url: sending.url)
            var forwarded = hop
            forwarded.request = sending
            let sent = try await next.send(forwarded, into: body, attempt: network)
            return try body.response(metrics: sent.metrics)
        }
        await attempt.emit(.cacheOutcome(answer.status))
        try await sink.takeWhole(answer.response)
        return SentExchange(request: answer.request, metrics: answer.response.metrics, cacheStatus: answer.status)
    }
}
