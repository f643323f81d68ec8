import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A download on its way to `destination`: the bytes so far in a file beside it
/// (`<name>.convey-partial`), and a small record of what they are (`<name>.convey-partial.json`)
/// so that a later run can resume them, and only them.
struct PartialDownload: Sendable {
    /// What the partial bytes are a prefix of.
    struct Record: Codable, Sendable, Equatable {
        /// The URL they came from.
        var url: String
        /// The strong `ETag`, else the `Last-Modified` date, that `If-Range` sends back.
        var validator: String
        /// The whole file's size, when the first response announced it.
        var total: Int64?
    }

    /// Where to resume: the bytes on disk and what they were received under.
    struct ResumePoint: Sendable, Equatable {
        var offset: Int64
        var validator: String
        var total: Int64?
    }

    let destination: URL

    var file: URL { destination.appendingPathExtension("convey-partial") }
    var recordFile: URL { file.appendingPathExtension("json") }

    /// The largest record read: a URL and a validator.
    private static let recordSizeLimit = 64 * 1024

    /// The record beside the partial file, or `nil` when there is none or it cannot be read
    /// (a link, a FIFO, too large, not JSON).
    func savedRecord() -> Record? {
        guard let bytes = try? OwnerOnlyFiles.read(atPath: recordFile.path, limit: Self.recordSizeLimit) else { return nil }
        return try? JSONDecoder().decode(Record.self, from: Data(bytes))
    }

    /// Notes what the partial bytes are, so that they can be resumed; `nil` makes them unresumable.
    func saveRecord(_ record: Record?) throws(FileFailure) {
        guard let record else {
            unlink(recordFile.path)
            return
        }
        guard let encoded = try? JSONEncoder().encode(record) else {
            throw FileFailure(path: recordFile.path, action: "write", reason: "the record could not be encoded")
        }
        let saved = encoded.withUnsafeBytes { bytes in
            Result { () throws(FileFailure) in
                try OwnerOnlyFiles.replace(atPath: recordFile.path, temporaryPath: OwnerOnlyFiles.temporaryPath(besides: recordFile.path), with: bytes)
            }
        }
        try saved.get()
    }

    /// Takes the partial file for one attempt; see `PartialClaim`. `permissions` is the finished
    /// file's mode, `0o000` to `0o777`; any other value (a mode written in decimal, `644`) fails
    /// the download rather than give the file permissions nobody asked for.
    func claim(permissions: Int) throws(ConveyError) -> PartialClaim {
        guard (0...0o777).contains(permissions) else {
            throw .downloadFailed(destination: destination, reason: "permissions \(permissions) are not a file mode from 0o000 to 0o777 "
                                  + "(write them in octal: 0o644, not 644); nothing was written")
        }
        return try PartialClaim(partial: self, mode: mode_t(permissions))
    }
}

/// One download's hold on its partial file, from an attempt's start until the file is put in
/// place or let go: the file open, owner-only (or the permissions asked for), and locked with
/// `flock` against every other download to the same destination, in this process or another.
///
/// A second download to a destination whose partial file is held fails at once with
/// `ConveyError.downloadFailed` instead of writing into the same file. The partial file is
/// removed or renamed only while it is held, and a claim checks, once it holds the lock, that
/// the path still names the file it locked, so a download that opened the file just before
/// another one moved it into place never writes into the finished file.
///
/// The lock is let go of while the app is suspended (`FileLocks`) and taken again after; a claim
/// whose file another download took meanwhile is lost: its writes and its commit fail.
final class PartialClaim: Sendable {
    let partial: PartialDownload
    /// Its size when it was claimed: the bytes a resume continues.
    let initialSize: Int64
    /// The file and the lock's state, guarded against a release or retake for the app's
    /// suspension (`FileLocks`), which come from another task.
    private let hold: InlineLocked<Hold>

    private struct Hold {
        /// The partial file, open for reading and writing; -1 once let go.
        var descriptor: Int32
        /// Whether the `flock` is held (not let go of for the app's suspension).
        var locked = true
        /// Why the claim was lost while let go of: another download took the file meanwhile.
        var lost: String?
    }

    /// The partial file, open for reading and writing; -1 once let go.
    private var descriptor: Int32 { hold.withLock { $0.descriptor } }

    /// How many times a claim reopens a partial file that was moved or removed under it.
    private static let attempts = 3

    fileprivate init(partial: PartialDownload, mode: mode_t) throws(ConveyError) {
        self.partial = partial
        let file = try Self.openAndLock(partial, mode: mode)
        hold = InlineLocked(Hold(descriptor: file.descriptor))
        initialSize = file.size
        FileLockRegistry.current.register(self)
    }

    /// The partial file, open and locked, once the path is checked to still name it.
    private static func openAndLock(_ partial: PartialDownload, mode: mode_t) throws(ConveyError) -> OwnerOnlyFiles.OpenedFile {
        let path = partial.file.path
        do {
            try checkReplaceable(partial.destination)
            try OwnerOnlyFiles.createFolder(atPath: partial.destination.deletingLastPathComponent().path)
            for _ in 0..<attempts {
                let opened = try OwnerOnlyFiles.openOrCreate(atPath: path, mode: mode)
                guard flock(opened.descriptor, LOCK_EX | LOCK_NB) == 0 else {
                    let code = errno
                    close(opened.descriptor)
                    if code == EWOULDBLOCK { throw ConveyError.downloadFailed(
                        destination: partial.destination, reason: "another download to this file is in progress") }
                    throw FileFailure(path: path, action: "lock", code: code)
                }
                if namesTheFile(path, opened.descriptor) { return opened }
                // Another download finished or dropped this file between our open and our lock.
                close(opened.descriptor)
            }
            throw FileFailure(path: path, action: "claim", reason: "other downloads kept replacing it")
        } catch let failure as FileFailure {
            throw .downloadFailed(destination: partial.destination, reason: failure.description)
        } catch let error as ConveyError {
            throw error
        } catch {
            throw .downloadFailed(destination: partial.destination, reason: "\(error)")
        }
    }

    deinit {
        let descriptor = descriptor
        if descriptor >= 0 { close(descriptor) }
    }

    /// Whether `path` still names the file open at `descriptor`.
    private static func namesTheFile(_ path: String, _ descriptor: Int32) -> Bool {
        var held = stat(), named = stat()
        return fstat(descriptor, &held) == 0 && lstat(path, &named) == 0 && held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }

    /// Lets go of the `flock` for the app's suspension, keeping the file open: writes go on, and
    /// another download may take the file meanwhile.
    func releaseLock() {
        hold.withLock { hold in
            guard hold.descriptor >= 0, hold.locked else { return }
            flock(hold.descriptor, LOCK_UN)
            hold.locked = false
        }
    }

    /// Takes the `flock` again after the app's suspension; when another download took the file
    /// meanwhile, or it was replaced, the claim is lost: later writes and the commit fail.
    func retakeLock() {
        hold.withLock { hold in
            guard hold.descriptor >= 0, !hold.locked, hold.lost == nil else { return }
            guard flock(hold.descriptor, LOCK_EX | LOCK_NB) == 0 else {
                hold.lost = "another download took the partial file while this one had let go of it for the app's suspension"
                return
            }
            guard Self.namesTheFile(partial.file.path, hold.descriptor) else {
                flock(hold.descriptor, LOCK_UN)
                hold.lost = "the partial file was replaced while this download had let go of it for the app's suspension"
                return
            }
            hold.locked = true
        }
    }

    /// Why the claim was lost, if it was.
    var lostReason: String? { hold.withLock { $0.lost } }

    /// Throws unless `destination` is absent, a regular file or a link (which the final rename
    /// replaces): a device such as `/dev/null`, a FIFO, a socket or a folder is never replaced.
    private static func checkReplaceable(_ destination: URL) throws(ConveyError) {
        var info = stat()
        guard lstat(destination.path, &info) == 0 else { return }
        let type = info.st_mode & S_IFMT
        guard type != S_IFREG, type != S_IFLNK else { return }
        let what = type == S_IFDIR ? "a folder" : type == S_IFIFO ? "a FIFO" : type == S_IFSOCK ? "a socket" : "a device"
        throw .downloadFailed(destination: destination, reason: "it is \(what), not a regular file, and is never replaced")
    }

    /// Where a download of `url` can resume, or `nil`: no bytes, no record, another URL.
    func resumePoint(for url: URL?) -> PartialDownload.ResumePoint? {
        guard let url, initialSize > 0, let record = partial.savedRecord(), record.url == url.absoluteString else { return nil }
        return PartialDownload.ResumePoint(offset: initialSize, validator: record.validator, total: record.total)
    }

    /// Drops the partial bytes and their record, keeping the file (and the lock).
    func discardBytes() throws(FileFailure) {
        try partial.saveRecord(nil)
        guard ftruncate(descriptor, 0) == 0 else { throw FileFailure(path: partial.file.path, action: "empty", code: errno) }
    }

    /// Whether a record says the partial bytes can be resumed.
    var isResumable: Bool { partial.savedRecord() != nil }

    /// Writes `bytes` at `offset` of the partial file.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(FileFailure) {
        if let lostReason { throw FileFailure(path: partial.file.path, action: "write to", reason: lostReason) }
        let descriptor = descriptor
        var done = 0
        while done < bytes.count, let base = bytes.baseAddress {
            let count = pwrite(descriptor, base + done, bytes.count - done, off_t(offset + Int64(done)))
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw FileFailure(path: partial.file.path, action: "write to", code: count < 0 ? errno : EIO) }
            done += count
        }
    }

    /// Flushes the partial file to the disk, as the outbox's items are (`DurableFiles`: on the sync
    /// thread, through the drive's cache on Apple platforms), waiting for it: call it from the
    /// download's writer queue.
    func synchronize() throws(FileFailure) {
        let code = DurableFiles.sync(descriptor)
        guard code == 0 else { throw FileFailure(path: partial.file.path, action: "save", code: code) }
    }

    /// Puts the finished file in place of `destination` in one step, replacing what was there
    /// (a link there is replaced, not followed), and lets go of the claim. A claim let go of for
    /// the app's suspension is taken again first: the file is moved only while it is held.
    func commit() throws(ConveyError) {
        retakeLock()
        if let lostReason { throw .downloadFailed(destination: partial.destination, reason: lostReason) }
        try Self.checkReplaceable(partial.destination)
        guard rename(partial.file.path, partial.destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            throw .downloadFailed(destination: partial.destination, reason: "could not move the finished file into place: \(reason)")
        }
        try? partial.saveRecord(nil)
        hold.withLock { hold in
            close(hold.descriptor)
            hold.descriptor = -1
        }
    }

    /// Lets go of the claim after a failure, keeping the partial file only when a later run can
    /// resume it (bytes and a record).
    func release() {
        let descriptor = descriptor
        guard descriptor >= 0 else { return }
        var info = stat()
        let hasBytes = fstat(descriptor, &info) == 0 && info.st_size > 0
        // A lost claim's file is another download's now: left alone.
        if lostReason == nil, !hasBytes || !isResumable {
            unlink(partial.file.path)
            unlink(partial.recordFile.path)
        }
        hold.withLock { hold in
            close(hold.descriptor)
            hold.descriptor = -1
        }
    }
}

extension PartialClaim: ReleasableFileLock {
    func releaseForSuspension() async {
        releaseLock()
    }

    func retakeAfterSuspension() async {
        retakeLock()
    }
}
