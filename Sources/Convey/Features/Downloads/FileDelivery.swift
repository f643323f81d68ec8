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

    /// The file writer reads the body, at the disk's pace.
    var readsBodyItself: Bool { true }

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

    /// A `416` says the partial bytes no longer fit the resource: the next attempt starts over.
    func refused(_ head: ResponseHead, holding hold: (any AttemptHold)?) {
        guard head.statusCode == 416, let file = hold as? AttemptFile else { return }
        do throws(FileFailure) {
            try file.claim.discardBytes()
        } catch {
            // The next attempt's request finds the bytes unusable all the same and starts over.
        }
    }

    /// Writes the attempt's body to its partial file and checks it: the file writer at the top of
    /// the attempt, pulling the body through every step below. What goes up past the attempt is
    /// an empty body: this one is in the file.
    func stage(_ exchange: inout Exchange, holding hold: (any AttemptHold)?, plan: RunPlan) async throws {
        guard let file = hold as? AttemptFile else { throw notPrepared }
        let body = FileBody(claim: file.claim, resumePoint: file.resumePoint, progress: progress)
        try await body.write(exchange.body, of: exchange.head)
        exchange.body = .empty
    }

    /// Puts the file in place: the one the attempt wrote, or, when a step around the run handed
    /// on a body of its own, that body, written in its stead.
    func payload(_ exchange: Exchange, staged: Void?, holding hold: (any AttemptHold)?, plan: RunPlan, deadline: RunDeadline?) async throws -> URL {
        let file: AttemptFile
        if let held = hold as? AttemptFile {
            file = held
        } else {
            file = AttemptFile(claim: try partial.claim(permissions: permissions), resumePoint: nil)
        }
        if staged == nil {
            do {
                let body = FileBody(claim: file.claim, resumePoint: nil, progress: progress)
                var answer = exchange.head
                // The answer is the whole file, whatever its status says of ranges.
                if answer.statusCode == 206 { answer.statusCode = 200 }
                try await body.write(exchange.body, of: answer)
            } catch {
                file.release()
                throw error
            }
        }
        try file.claim.commit()
        return partial.destination
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
