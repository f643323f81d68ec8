import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads: the body streams to a partial file beside the destination, which takes its place
/// only when complete and verified. A broken transfer leaves the partial file for the next
/// attempt or run, which resumes it with `Range` and `If-Range`; the cache is not involved.
///
/// Each attempt claims the partial file (`PartialClaim`) in `prepare` and holds it until the
/// file is put in place or the attempt is abandoned, so one download per destination runs at a time.
@ConveyActor
struct FileDelivery: ResponseDelivery {
    let partial: PartialDownload
    let resumes: Bool
    let permissions: FilePermissions
    let progress: DownloadProgressHandler?
    /// The task's `didFinish(with:)`, for a task whose own payload is the file (`FileDownloadingTask`).
    var didFinish: (@ConveyActor (ServerResponse<URL>) async -> Void)?
    /// The current attempt's claim and sink, which `exchange`, `payload` and `abandon` reach.
    private let attempt = AttemptBody()

    init(destination: URL, resumes: Bool, permissions: FilePermissions, progress: DownloadProgressHandler?) {
        partial = PartialDownload(destination: destination)
        self.resumes = resumes
        self.permissions = permissions
        self.progress = progress
    }

    func prepare(_ request: inout OutgoingRequest) {
        // Ranges are byte ranges of the representation as sent: ask for it unencoded.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        attempt.release()
        // `prepare` cannot throw: a claim that fails fails the attempt when its exchange starts.
        let claim: PartialClaim
        do {
            claim = try partial.claim(permissions: permissions)
        } catch {
            attempt.claim = .failure(error)
            return
        }
        attempt.claim = .success(claim)
        if !resumes {
            do {
                try claim.discardBytes()
            } catch {
                attempt.claim = .failure(.downloadFailed(DownloadFailure(destination: partial.destination, reason: error.description)))
                claim.release()
                return
            }
        }
        guard resumes, let point = claim.resumePoint(for: request.url) else { return }
        request.setValue("bytes=\(point.offset)-", forHTTPHeaderField: "Range")
        request.setValue(point.validator, forHTTPHeaderField: "If-Range")
        attempt.resumePoint = point
    }

    func exchange(_ request: OutgoingRequest, status: StatusCheck, send: @escaping DeliverySend) async throws -> DeliveredExchange {
        guard let claimed = attempt.claim else { throw ConveyError.downloadFailed(DownloadFailure(destination: partial.destination, reason: "the download was not prepared")) }
        let claim = try claimed.get()
        let body = FileBody(claim: claim, resumePoint: attempt.resumePoint, status: status, progress: progress)
        let sent: SentExchange
        do {
            sent = try await send(request, body, SendOptions(expectsLargeBody: true))
        } catch {
            await body.abandonTransfer()
            throw error
        }
        try await body.finishTransfer()
        guard let head = body.head else { throw URLError(.badServerResponse) }
        return DeliveredExchange(request: sent.request, head: head, data: body.errorBody, metrics: sent.metrics)
    }

    func payload(from response: ServerResponse<Data>, url: URL?, deadline: RunDeadline?) async throws -> URL {
        guard case .success(let claim) = attempt.claim else { throw ConveyError.downloadFailed(DownloadFailure(destination: partial.destination, reason: "the download was not prepared")) }
        try claim.commit()
        attempt.claim = nil
        return partial.destination
    }

    func callDidFinish(_ response: ServerResponse<URL>) async {
        await didFinish?(response)
    }

    func abandon() {
        attempt.release()
    }
}

/// What one attempt of a download holds, shared between the delivery's steps.
@ConveyActor
private final class AttemptBody {
    var resumePoint: PartialDownload.ResumePoint?
    var claim: Result<PartialClaim, ConveyError>?

    /// Lets go of the partial file, keeping it only when it can be resumed.
    func release() {
        if case .success(let claim) = claim { claim.release() }
        claim = nil
        resumePoint = nil
    }
}
