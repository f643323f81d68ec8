import Foundation

extension TaskRecorder {
    /// Writes the records in the folder as a HAR 1.2 file, oldest first, one entry per recorded
    /// attempt (each retry and each followed redirect is one), after the writes queued so far.
    ///
    /// Records are read and written one at a time, so memory does not grow with their number; the
    /// file appears at `file` only when complete (owner-only, replacing what was there, never
    /// through a link). Each entry carries `_convey` with the task type, the attempt, the cache
    /// status, the server and the outcome. Records are masked when written, with the recording
    /// server's `Redaction`; the export masks them again with `redaction`, unless
    /// `includingSecrets` asks to keep what the records hold (the file's `comment` then says so).
    /// Attempts that failed before a request was built have no URL and are left out.
    ///
    /// - Returns: how many entries were written.
    @discardableResult
    public func exportHAR(to file: URL, redaction: Redaction = .standard, includingSecrets: Bool = false) async throws(ConveyError) -> Int {
        await flush()
        let folder = RecordFolder(url: folder)
        let path = file.path(percentEncoded: false)
        let privacy = HARPrivacy(redaction: includingSecrets ? nil : redaction)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Int, HARError>, Never>) in
            HARFileQueues.queue(for: path).async {
                continuation.resume(returning: Result { () throws(HARError) in
                    try Self.export(folder, to: path, privacy: privacy, includingSecrets: includingSecrets)
                })
            }
        }
        do throws(HARError) {
            return try result.get()
        } catch {
            throw error.conveyError
        }
    }

    private static func export(_ folder: RecordFolder, to path: String, privacy: HARPrivacy, includingSecrets: Bool) throws(HARError) -> Int {
        let writer = try HARFileWriter(path: path, splice: .newDocument())
        var written = 0
        var withoutRequest = 0
        for id in folder.recordIDs().reversed() {
            guard let record = folder.read(id: id) else { continue }
            guard let entry = HAREntry(record, privacy: privacy) else {
                withoutRequest += 1
                continue
            }
            try writer.append(entry)
            written += 1
        }
        var comment = "Exported by Convey from \(written + withoutRequest) task records"
            + (withoutRequest > 0 ? "; \(withoutRequest) without a request left out." : ".")
        comment += includingSecrets
            ? " " + HARPrivacy.secretsKeptComment + " Values the recording server masked stay masked: records never hold them."
            : " Credentials are masked (\(Redaction.mask))."
        try writer.finish(ending: HARDocumentSplice.newDocumentEnding(comment: comment))
        return written
    }
}
