import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads: the body streams to a partial file beside the destination, which takes its place
/// only when complete and verified. A broken transfer leaves the partial file for the next
/// attempt or run, which resumes it with `Range` and `If-Range`; the cache is not involved.
///
/// Each attempt claims the partial file (`PartialClaim`) while its request is built; the run's
/// machine holds the claim until the file is put in place or the attempt is let go, so one
/// download per destination runs at a time.
struct FileDelivery: ResponseDelivery {
    let partial: PartialDownload
    let resumes: Bool
    let permissions: Int
    let progress: DownloadProgressHandler?
    /// The task's `didFinish(with:)`, for a task whose own payload is the file (`FileDownloadingTask`).
    var didFinish: (@ConveyActor @Sendable (ServerResponse<URL>) async -> Void)?

    init(destination: URL, resumes: Bool, permissions: Int, progress: DownloadProgressHandler?) {
        partial = PartialDownload(destination: destination)
        self.resumes = resumes
        self.permissions = permissions
        self.progress = progress
    }

    @ConveyActor
    func prepare(_ request: inout OutgoingRequest) throws -> (any AttemptHold)? {
        // Ranges are byte ranges of the representation as sent: ask for it unencoded.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let claim = try partial.claim(permissions: permissions)
        var resumePoint: PartialDownload.ResumePoint?
        if resumes {
            resumePoint = claim.resumePoint(for: request.url)
        } else {
            do throws(FileFailure) {
                try claim.discardBytes()
            } catch {
                claim.release()
                throw ConveyError.downloadFailed(destination: partial.destination, reason: error.description)
            }
        }
        if let resumePoint {
            request.setValue("bytes=\(resumePoint.offset)-", forHTTPHeaderField: "Range")
            request.setValue(resumePoint.validator, forHTTPHeaderField: "If-Range")
        }
        return AttemptFile(claim: claim, resumePoint: resumePoint)
    }

    func exchange(_ hop: Hop, through chain: ExchangeChain, attempt: AttemptContext,
                  holding hold: (any AttemptHold)?) async throws -> (Exchange, (any AttemptHold)?) {
        guard let file = hold as? AttemptFile else { throw notPrepared }
        let body = FileBody(claim: file.claim, resumePoint: file.resumePoint, status: attempt.plan.status, progress: progress)
        var large = attempt
        large.expectsLargeBody = true
        let sent: SentExchange
        do {
            sent = try await chain.send(hop, into: body, attempt: large)
        } catch {
            await body.abandonTransfer()
            throw error
        }
        try await body.finishTransfer()
        guard let head = body.head else { throw URLError(.badServerResponse) }
        return (Exchange(request: sent.request, head: head, body: body.errorBody, metrics: sent.metrics), nil)
    }

    func payload(from exchange: Exchange, holding hold: (any AttemptHold)?, plan: RunPlan, deadline: RunDeadline?) async throws -> URL {
        guard let file = hold as? AttemptFile else { throw notPrepared }
        try file.claim.commit()
        return partial.destination
    }

    func payload(answering exchange: Exchange, plan: RunPlan, deadline: RunDeadline?) async throws -> URL {
        throw ConveyError.downloadFailed(destination: partial.destination, reason: "an interceptor around the run answered it, and a download "
                                         + "to a file is written by an attempt: answer it from an interceptor around each exchange instead")
    }

    var callsDidFinish: Bool { didFinish != nil }

    @ConveyActor
    func callDidFinish(_ response: ServerResponse<URL>) async {
        await didFinish?(response)
    }

    private var notPrepared: ConveyError {
        ConveyError.downloadFailed(destination: partial.destination, reason: "the download was not prepared")
    }
}

/// What one attempt of a download holds: its claim on the partial file, and where it resumes.
private struct AttemptFile: AttemptHold {
    let claim: PartialClaim
    let resumePoint: PartialDownload.ResumePoint?

    /// Lets go of the partial file, keeping it only when it can be resumed.
    func release() { claim.release() }
}
