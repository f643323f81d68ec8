import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads: the body streams to a partial file beside the destination, which takes its place
/// only when complete and verified. A broken transfer leaves the partial file for the next
/// attempt or run, which resumes it with `Range` and `If-Range`; the cache is not involved.
@ConveyActor
struct FileDelivery: ResponseDelivery {
    let partial: PartialDownload
    let resumes: Bool
    let progress: DownloadProgressHandler?
    /// The current attempt's sink, which `abandon` and `payload` reach.
    private let attempt = AttemptBody()

    init(destination: URL, resumes: Bool, progress: DownloadProgressHandler?) {
        partial = PartialDownload(destination: destination)
        self.resumes = resumes
        self.progress = progress
    }

    func prepare(_ request: inout URLRequest) {
        // Ranges are byte ranges of the representation as sent: ask for it unencoded.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        attempt.resumePoint = nil
        guard resumes else {
            partial.discard()
            return
        }
        guard let point = partial.resumePoint(for: request.url) else { return }
        request.setValue("bytes=\(point.offset)-", forHTTPHeaderField: "Range")
        request.setValue(point.validator, forHTTPHeaderField: "If-Range")
        attempt.resumePoint = point
    }

    func exchange(_ request: URLRequest, send: @escaping DeliverySend) async throws -> DeliveredExchange {
        try FileManager.default.createDirectory(at: partial.destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        let body = FileBody(partial: partial, resumePoint: attempt.resumePoint, progress: progress)
        attempt.body = body
        let metrics = try await send(request, body, SendOptions(expectsLargeBody: true))
        try body.finishTransfer()
        guard let head = body.head else { throw URLError(.badServerResponse) }
        return DeliveredExchange(request: request, head: head, data: body.errorBody, metrics: metrics)
    }

    func payload(from response: ServerResponse<Data>, url: URL?) async throws -> URL {
        guard (200..<300).contains(response.statusCode), response.statusCode != 204 else {
            throw HTTPError(statusCode: response.statusCode, body: response.data, headers: response.headerFields.combined,
                            url: url, method: HTTPMethod(rawValue: response.request.httpMethod ?? "GET"))
        }
        try partial.commit()
        attempt.body = nil
        return partial.destination
    }

    func abandon() {
        attempt.body?.abandon()
        attempt.body = nil
    }
}

/// What one attempt of a download holds, shared between the delivery's steps.
@ConveyActor
private final class AttemptBody {
    var resumePoint: PartialDownload.ResumePoint?
    var body: FileBody?
}
