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
        let limit = task.configuration?.maximumResponseSize ?? task.server.configuration.maximumResponseSize
        let body = InMemoryBody(limit: limit, url: request.url)
        let sent = try await send(request, body, SendOptions(answersFromCache: true))
        let response = try body.response(metrics: sent.metrics)
        return DeliveredExchange(request: sent.request, head: response.head, data: response.data,
                                 metrics: response.metrics, cacheStatus: sent.cacheStatus)
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
