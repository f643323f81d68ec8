import Foundation

/// The file writer of a download, at the top of each attempt: it pulls the body of a response the
/// run's status rule accepted and writes it to the claimed partial file (appended after a `206`
/// that provably continues it, from the start otherwise).
///
/// Written by a `DownloadWriter` (plain `pwrite(2)` calls, one per chunk, on a serial queue),
/// which holds a bounded buffer: when the disk falls behind, the writer stops pulling, so the
/// body's buffer fills and the transfer pauses until the disk catches up. Never glues two versions
/// together: a `206` must start where the partial file ends, run to the end of a whole whose size
/// agrees with what was recorded, and carry the validator it was asked for.
final class FileBody: Sendable {
    private let claim: PartialClaim
    private let resumePoint: PartialDownload.ResumePoint?
    private let progress: DownloadProgressHandler?
    private let writer: DownloadWriter
    private let transfer = InlineLocked(Transfer())

    /// What the response said, and where its body goes.
    private struct Transfer: Sendable {
        var head: ResponseHead?
        /// Whether the body goes to the partial file.
        var writesFile = false
        var written: Int64 = 0
        var expectedTotal: Int64?
    }

    var head: ResponseHead? { transfer.withLock { $0.head } }

    /// `write` and `bufferLimit` replace the partial file's `pwrite` and the writer's bound in tests.
    init(claim: PartialClaim, resumePoint: PartialDownload.ResumePoint?, progress: DownloadProgressHandler?,
         write: DownloadWriter.Write? = nil, bufferLimit: Int = DownloadWriter.defaultLimit) {
        self.claim = claim
        self.resumePoint = resumePoint
        self.progress = progress
        let writesChunk: DownloadWriter.Write
        if let write {
            writesChunk = write
        } else {
            writesChunk = { (bytes, offset) throws(FileFailure) in try claim.write(bytes, at: offset) }
        }
        writer = DownloadWriter(limit: bufferLimit, write: writesChunk, progress: progress)
    }

    private var partial: PartialDownload { claim.partial }

    /// Writes `body`, the body of a response with `head`, to the partial file: pulls each chunk,
    /// waiting whenever the writer is full, then waits for the writer, flushes the file to the disk
    /// and checks its length against what the server announced. A body that breaks off, or a
    /// write that fails, throws once what arrived before reached the file, so that a later attempt
    /// resumes after it.
    func write(_ body: ResponseBody, of head: ResponseHead) async throws {
        do {
            try receive(head)
            switch body {
            case .data(let data):
                try await take(data)
            case .stream(let source):
                while let chunk = try await source.next() { try await take(chunk) }
            }
            try await finishTransfer()
        } catch {
            body.close()
            await abandonTransfer()
            throw error
        }
    }

    /// Offers `chunk` to the writer until it takes it.
    private func take(_ chunk: Data) async throws {
        while try !chunk.withUnsafeBytes({ try offer($0) }) {
            await withCheckedContinuation { continuation in whenReady { continuation.resume() } }
            try Task.checkCancellation()
        }
    }

    func receive(_ head: ResponseHead) throws {
        try transfer.withLock { transfer in
            transfer.head = head
            if head.statusCode == 206 {
                try continuePartial(head, in: &transfer)
            } else {
                try startOver(head, in: &transfer)
            }
        }
        report()
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        try transfer.withLock { transfer in
            guard transfer.writesFile else { return true }
            if let expectedTotal = transfer.expectedTotal, transfer.written + Int64(bytes.count) > expectedTotal {
                throw failure("the server sent more than the \(expectedTotal) bytes it announced")
            }
            do throws(FileFailure) {
                guard try writer.enqueue(bytes, at: transfer.written, of: transfer.expectedTotal) else { return false }
            } catch {
                throw failure(error.description)
            }
            transfer.written += Int64(bytes.count)
            return true
        }
    }

    func whenReady(_ resume: @escaping @Sendable () -> Void) {
        writer.whenReady(resume)
    }

    /// Once the transfer is over: waits for the writer, flushes the file to the disk and checks
    /// its length against what the server announced. Throws a write that failed on the way.
    func finishTransfer() async throws {
        let (writesFile, written, expectedTotal) = transfer.withLock { transfer in
            defer { transfer.writesFile = false }
            return (transfer.writesFile, transfer.written, transfer.expectedTotal)
        }
        guard writesFile else {
            // File calls the head asked for (dropping refused partial bytes) are done before the attempt ends.
            await writer.drain()
            return
        }
        let claim = claim
        do throws(FileFailure) {
            try await writer.finish { () throws(FileFailure) in try claim.synchronize() }
        } catch {
            throw failure(error.description)
        }
        if let expectedTotal, written != expectedTotal {
            throw failure("received \(written) of \(expectedTotal) bytes")
        }
    }

    /// After a failed transfer: waits for the chunks received to reach the partial file (a later
    /// attempt resumes after them), so that nothing writes to it once the attempt lets go of it.
    func abandonTransfer() async {
        await writer.drain()
    }

    // MARK: Inside the lock

    private func continuePartial(_ head: ResponseHead, in transfer: inout Transfer) throws {
        guard let resumePoint else { throw failure("the server sent 206 Partial Content to a request for the whole file") }
        guard let range = head.fields["Content-Range"].flatMap(ContentRange.init) else {
            throw failure("a 206 without a usable Content-Range: \(head.fields["Content-Range"] ?? "none")")
        }
        if let reason = Self.refusal(of: head, range: range, resuming: resumePoint) {
            discardLater()
            throw failure(reason)
        }
        transfer.writesFile = true
        transfer.written = resumePoint.offset
        transfer.expectedTotal = range.total
    }

    /// Why a `206` does not prove that it continues the partial bytes, or `nil` when it does: it
    /// must start where they end, run to the end of a known whole (the size first announced,
    /// when there was one), and carry the very validator `If-Range` sent: the same strong
    /// `ETag`, or the same `Last-Modified` date.
    static func refusal(of head: ResponseHead, range: ContentRange, resuming point: PartialDownload.ResumePoint) -> String? {
        guard range.first == point.offset else { return "the server resumed at byte \(range.first), not at \(point.offset)" }
        guard let total = range.total else { return "the server did not say how large the whole file is (Content-Range bytes \(range.first)-\(range.last)/*)" }
        guard range.last == total - 1 else { return "the server sent bytes \(range.first)-\(range.last) of \(total), not the rest of the file" }
        if let recorded = point.total, recorded != total {
            return "the server resumed a file of \(total) bytes, not the \(recorded) bytes first announced"
        }
        if point.validator.hasPrefix("\"") {
            guard let tag = head.fields["ETag"]?.trimmingASCIIWhitespace(), tag == point.validator else {
                return "the server resumed without proving it is the same version (ETag \(head.fields["ETag"] ?? "none"), expected \(point.validator))"
            }
        } else {
            guard let date = head.fields["Last-Modified"]?.trimmingASCIIWhitespace(), date == point.validator else {
                return "the server resumed without proving it is the same version (Last-Modified \(head.fields["Last-Modified"] ?? "none"), expected \(point.validator))"
            }
        }
        return nil
    }

    private func startOver(_ head: ResponseHead, in transfer: inout Transfer) throws {
        let url = head.url.absoluteString
        // Only a success names the resource a later `Range` may continue; another status the task
        // reads as a response (its body goes to the file all the same) leaves no record.
        let resumable = (200..<300).contains(head.statusCode)
        let validator = resumable ? head.fields["ETag"].flatMap { $0.hasPrefix("W/") ? nil : $0 } ?? head.fields["Last-Modified"] : nil
        let expectedTotal = head.fields["Content-Length"].flatMap { Int64($0.trimmingASCIIWhitespace()) }
        transfer.expectedTotal = expectedTotal
        // On the writer's queue, before the first chunk: the transport's thread never waits for the disk.
        let (claim, partial, record) = (claim, partial, validator.map { PartialDownload.Record(url: url, validator: $0, total: expectedTotal) })
        writer.perform { () throws(FileFailure) in
            try claim.discardBytes()
            try partial.saveRecord(record)
        }
        transfer.writesFile = true
        transfer.written = 0
    }

    /// Reports progress when the body starts going to the file, after the head, on the writer's queue.
    private func report() {
        guard progress != nil else { return }
        let snapshot: DownloadProgress? = transfer.withLock { transfer in
            transfer.writesFile ? DownloadProgress(bytesWritten: transfer.written, totalBytes: transfer.expectedTotal) : nil
        }
        if let snapshot { writer.report(snapshot) }
    }

    /// Drops the partial bytes on the writer's queue: a later attempt starts over.
    private func discardLater() {
        let claim = claim
        writer.perform { () throws(FileFailure) in try claim.discardBytes() }
    }

    private func failure(_ reason: String) -> ConveyError {
        .downloadFailed(destination: partial.destination, reason: reason)
    }
}

/// A `Content-Range: bytes first-last/total` value (RFC 9110 §14.4); `total` is `nil` for `*`.
struct ContentRange: Equatable {
    var first: Int64
    var last: Int64
    var total: Int64?

    init?(_ value: String) {
        let text = value.trimmingASCIIWhitespace()
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst(6)
        let halves = spec.split(separator: "/", maxSplits: 1)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last else { return nil }
        self.first = first
        self.last = last
        if halves[1] == "*" {
            total = nil
        } else {
            guard let total = Int64(halves[1]), total > last else { return nil }
            self.total = total
        }
    }
}
