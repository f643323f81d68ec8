import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The sink of a download: a successful body goes to the partial file (appended after a `206`
/// that continues it exactly, from the start after a `200`), an error body to memory.
///
/// Written on the transport's thread with plain `write(2)` calls, one per chunk, so memory stays
/// flat whatever the size. Never glues two versions together: a `206` must start where the
/// partial file ends and carry the validator it was asked for.
final class FileBody: ResponseBodySink, @unchecked Sendable {
    private let lock = NSLock()
    private let partial: PartialDownload
    private let resumePoint: PartialDownload.ResumePoint?
    private let progress: DownloadProgressHandler?
    private(set) var head: ResponseHead?
    /// The start of an error body, for `HTTPError`.
    private(set) var errorBody = Data()
    private var descriptor: Int32 = -1
    private var written: Int64 = 0
    private var expectedTotal: Int64?

    /// How much of an error body is kept.
    private static var errorBodyLimit: Int { 64 * 1024 }

    init(partial: PartialDownload, resumePoint: PartialDownload.ResumePoint?, progress: DownloadProgressHandler?) {
        self.partial = partial
        self.resumePoint = resumePoint
        self.progress = progress
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    func receive(_ head: ResponseHead) throws {
        try lock.withLock {
            self.head = head
            switch head.statusCode {
            case 206:
                try continuePartial(head)
            case 200..<300:
                try startOver(head)
            case 416:
                // The partial bytes do not fit the resource any more: the next attempt starts over.
                partial.discard()
            default:
                break
            }
        }
        report()
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        try lock.withLock {
            guard descriptor >= 0 else {
                let room = max(0, Self.errorBodyLimit - errorBody.count)
                errorBody.append(contentsOf: bytes.prefix(room))
                return
            }
            var offset = 0
            while offset < bytes.count, let base = bytes.baseAddress {
                let count = write(descriptor, base + offset, bytes.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw failure("could not write to \(partial.file.path): \(String(cString: strerror(errno)))")
                }
                offset += count
            }
            written += Int64(bytes.count)
            if let expectedTotal, written > expectedTotal {
                throw failure("the server sent more than the \(expectedTotal) bytes it announced")
            }
        }
        report()
        return true
    }

    /// Closes the file once the transfer is over and checks its length against what the server announced.
    func finishTransfer() throws {
        try lock.withLock {
            guard descriptor >= 0 else { return }
            let status = fsync(descriptor) == 0 ? close(descriptor) : -1
            descriptor = -1
            guard status == 0 else { throw failure("could not save \(partial.file.path): \(String(cString: strerror(errno)))") }
            if let expectedTotal, written != expectedTotal {
                throw failure("received \(written) of \(expectedTotal) bytes")
            }
        }
    }

    /// Lets go of the file after a failure, keeping the bytes only when a later run can resume them.
    func abandon() {
        lock.withLock {
            if descriptor >= 0 {
                close(descriptor)
                descriptor = -1
                if !partial.isResumable { partial.discard() }
            }
        }
    }

    // MARK: Inside the lock

    private func continuePartial(_ head: ResponseHead) throws {
        guard let resumePoint else { throw failure("the server sent 206 Partial Content to a request for the whole file") }
        guard let range = head.fields["Content-Range"].flatMap(ContentRange.init) else {
            throw failure("a 206 without a usable Content-Range: \(head.fields["Content-Range"] ?? "none")")
        }
        guard range.first == resumePoint.offset else {
            partial.discard()
            throw failure("the server resumed at byte \(range.first), not at \(resumePoint.offset)")
        }
        if let tag = head.fields["ETag"], !tag.hasPrefix("W/"), resumePoint.validator.hasPrefix("\""), tag != resumePoint.validator {
            partial.discard()
            throw failure("the server resumed another version (ETag \(tag), expected \(resumePoint.validator))")
        }
        try openPartial(flags: O_WRONLY | O_APPEND)
        written = resumePoint.offset
        expectedTotal = range.total
    }

    private func startOver(_ head: ResponseHead) throws {
        try openPartial(flags: O_WRONLY | O_CREAT | O_TRUNC)
        written = 0
        expectedTotal = head.fields["Content-Length"].flatMap { Int64($0.trimmingASCIIWhitespace()) }
        let url = head.url.absoluteString
        let validator = head.fields["ETag"].flatMap { $0.hasPrefix("W/") ? nil : $0 } ?? head.fields["Last-Modified"]
        do {
            try partial.saveRecord(validator.map { PartialDownload.Record(url: url, validator: $0) })
        } catch {
            throw failure("could not write \(partial.recordFile.path): \(error.localizedDescription)")
        }
    }

    private func openPartial(flags: Int32) throws {
        descriptor = open(partial.file.path, flags, 0o644)
        guard descriptor >= 0 else {
            throw failure("could not open \(partial.file.path): \(String(cString: strerror(errno)))")
        }
    }

    private func report() {
        guard let progress else { return }
        let snapshot = lock.withLock { DownloadProgress(bytesWritten: written, totalBytes: expectedTotal) }
        progress(snapshot)
    }

    private func failure(_ reason: String) -> ConveyError {
        .downloadFailed(DownloadFailure(destination: partial.destination, reason: reason))
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
