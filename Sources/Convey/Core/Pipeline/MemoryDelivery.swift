import Foundation

/// Bodies kept in memory: collected up to the size limit by the transport's step (or the cache),
/// and decoded into the task's payload (off the actor, in the run's own task).
struct MemoryDelivery<T: DownloadingTask>: ResponseDelivery {
    let task: T

    var keepsBodyInMemory: Bool { true }

    func stage(_ exchange: inout Exchange, holding hold: (any AttemptHold)?, plan: RunPlan) async throws -> T.DownloadPayload {
        // A step may have handed on a stream: read it into memory within the size limit first.
        if case .stream = exchange.body {
            exchange.body = .data(try await exchange.body.collected(limit: plan.sizeLimit, url: exchange.head.url))
        }
        return try PayloadDecoding.decode(T.DownloadPayload.self, from: exchange.data, using: plan.decoder, url: exchange.request.url)
    }

    func payload(_ exchange: Exchange, staged: T.DownloadPayload?, holding hold: (any AttemptHold)?, plan: RunPlan,
                 deadline: RunDeadline?) async throws -> T.DownloadPayload {
        if let staged { return staged }
        return try PayloadDecoding.decode(T.DownloadPayload.self, from: exchange.data, using: plan.decoder, url: exchange.request.url)
    }

    var callsDidFinish: Bool { true }

    @ConveyActor
    func callDidFinish(_ response: ServerResponse<T.DownloadPayload>) async {
        await Hooks.call(.didFinish, of: T.self) { await task.didFinish(with: response) }
    }
}
