import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Ordinary tasks: the body is collected in memory up to the size limit, through the cache, and
/// decoded into the task's payload: on the actor when small, off it otherwise.
@ConveyActor
struct MemoryDelivery<T: DownloadingTask>: ResponseDelivery {
    let task: T

    func exchange(_ request: OutgoingRequest, status: StatusCheck, send: @escaping DeliverySend) async throws -> DeliveredExchange {
        let server = task.server
        let limit = task.configuration?.maximumResponseSize ?? server.configuration.maximumResponseSize
        let coordinator = CacheCoordinator(task: task, server: server)
        let answer = try await coordinator.respond(to: request) { sending, followsRedirects in
            let body = InMemoryBody(limit: limit, url: sending.url)
            let metrics = try await send(sending, body, SendOptions(followsRedirects: followsRedirects))
            return try body.response(metrics: metrics)
        }
        let response = answer.response
        return DeliveredExchange(request: answer.request, head: response.head, data: response.data,
                                 metrics: response.metrics, cacheStatus: answer.status)
    }

    func payload(from response: ServerResponse<Data>, url: URL?, deadline: RunDeadline?) async throws -> T.DownloadPayload {
        if let payload = PayloadDecoding.passThrough(T.DownloadPayload.self, response.data) { return payload }
        // A small body decodes faster than the two thread hops of decoding it elsewhere.
        if response.data.count <= PayloadDecoding.inlineDecodingLimit {
            return try PayloadDecoding.decode(T.DownloadPayload.self, from: response.data, using: task.decoder, url: url)
        }
        return try await PayloadDecoding.decodeConcurrently(T.DownloadPayload.self, from: response.data, using: task.decoder, url: url)
    }

    func callDidFinish(_ response: ServerResponse<T.DownloadPayload>) async {
        await task.didFinish(with: response)
    }
}
