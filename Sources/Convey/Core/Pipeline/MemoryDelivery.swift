import Foundation

/// Bodies kept in memory: collected up to the size limit, through the cache when the run uses one,
/// and decoded into the task's payload (off the actor, in the run's own task).
struct MemoryDelivery<T: DownloadingTask>: ResponseDelivery {
    let task: T

    var keepsBodyInMemory: Bool { true }

    func exchange(_ hop: Hop, through chain: ExchangeChain, attempt: AttemptContext,
                  holding hold: (any AttemptHold)?) async throws -> (Exchange, (any AttemptHold)?) {
        let body = InMemoryBody(limit: attempt.plan.sizeLimit, url: hop.request.url)
        let sent = try await chain.send(hop, into: body, attempt: attempt)
        let (head, data) = try body.collected()
        return (Exchange(request: sent.request, head: head, body: data, metrics: sent.metrics, cacheStatus: sent.cacheStatus), nil)
    }

    func payload(from exchange: Exchange, holding hold: (any AttemptHold)?, plan: RunPlan, deadline: RunDeadline?) async throws -> T.DownloadPayload {
        try PayloadDecoding.decode(T.DownloadPayload.self, from: exchange.body, using: plan.decoder, url: exchange.request.url)
    }

    func payload(answering exchange: Exchange, plan: RunPlan, deadline: RunDeadline?) async throws -> T.DownloadPayload {
        try await payload(from: exchange, holding: nil, plan: plan, deadline: deadline)
    }

    var callsDidFinish: Bool { true }

    @ConveyActor
    func callDidFinish(_ response: ServerResponse<T.DownloadPayload>) async {
        await Hooks.call(.didFinish, of: T.self) { await task.didFinish(with: response) }
    }
}
