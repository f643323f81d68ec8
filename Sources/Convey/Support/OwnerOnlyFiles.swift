import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one way Convey creates, replaces and reads its own files: downloads and their partial
/// files and records, cache folders and entries, recordings.
///
/// - Nothing is ever opened through a symbolic link at the path itself (`O_NOFOLLOW`): a link
///   planted there fails the open instead of redirecting the write.
/// - A new file is created exclusively (`O_EXCL`); replacing a file means writing a new one beside
///   it and `rename(2)`-ing it over the old name, which replaces a link without following it.
/// - Files are owner-only (0600) and folders owner-only (0700) unless a caller asks otherwise
///   (a download's `permissions`); the mode is set with `fchmod`, so an existing file that is
///   reused never keeps wider permissions.
/// - Only regular files are opened, without blocking (`O_NONBLOCK`), so a FIFO, a device or a
///   folder in a file's place is refused instead of hanging or crashing the reader.
/// - Folders it creates get the default data-protection class on iOS, watchOS and visionOS
///   (`ProtectedData`).
///
/// Parent folders the caller names are trusted as they are: an app may keep its folders behind
/// links (macOS's `/tmp` is one).
enum OwnerOnlyFiles {
    /// The mode of files Convey creates: read and write for the owner only.
    static let fileMode: mode_t = 0o600
    /// The mode of folders Convey creates: the owner only.
    static let folderMode: mode_t = 0o700

    /// An open regular file and its size when it was opened.
    struct OpenedFile {
        let descriptor: Int32
        let size: Int64
    }

    /// Creates the folder at `path` and any missing parent, each owner-only; an existing folder
    /// (or a link to one) is used as it is.
    static func createFolder(atPath path: String) throws(FileFailure) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw FileFailure(path: path, action: "create the folder", code: EEXIST) }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path { try createFolder(atPath: parent) }
        if mkdir(path, folderMode) == 0 {
            ProtectedData.applyDefaultClass(toFolderAtPath: path)
            return
        }
        guard errno == EEXIST else { throw FileFailure(path: path, action: "create the folder", code: errno) }
    }

    /// Opens the regular file at `path` for reading and writing, creating it with `mode` when
    /// missing; an existing file gets `mode` too. Refuses a link, a FIFO, a folder or a device.
    static func openOrCreate(atPath path: String, mode: mode_t = fileMode) throws(FileFailure) -> OpenedFile {
        try openRegular(atPath: path, flags: O_RDWR | O_CREAT, mode: mode, action: "open")
    }

    /// Opens the regular file at `path` for reading, or returns `nil` when there is none. Refuses
    /// a link, a FIFO, a folder or a device.
    static func openForReading(atPath path: String) throws(FileFailure) -> OpenedFile? {
        do {
            return try openRegular(atPath: path, flags: O_RDONLY, mode: 0, action: "read")
        } catch let failure where failure.code == ENOENT {
            return nil
        }
    }

    /// The whole regular file at `path`, at most `limit` bytes, or `nil` when there is none.
    /// Throws for a link, anything but a regular file, a larger file or a failed read.
    static func read(atPath path: String, limit: Int) throws(FileFailure) -> [UInt8]? {
        guard let file = try openForReading(atPath: path) else { return nil }
        defer { close(file.descriptor) }
        return try readAll(file, limit: limit, path: path)
    }

    /// Every byte of an opened file, at most `limit`; throws when it holds more or a read fails.
    static func readAll(_ file: OpenedFile, limit: Int, path: String) throws(FileFailure) -> [UInt8] {
        guard file.size <= Int64(limit) else { throw FileFailure(path: path, action: "read", reason: "it holds \(file.size) bytes, more than the \(limit) expected") }
        let size = Int(file.size)
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var offset = 0
            while offset < size, let base = buffer.baseAddress {
                let count = posixRead(file.descriptor, base + offset, size - offset)
                if count < 0, errno == EINTR { continue }
                if count < 0 { failure = errno }
                if count <= 0 { break }
                offset += count
            }
            initialized = offset
        }
        if failure != 0 { throw FileFailure(path: path, action: "read", code: failure) }
        guard bytes.count == size else { throw FileFailure(path: path, action: "read", reason: "it was cut short while being read") }
        return bytes
    }

    /// Writes all of `bytes` at the descriptor's position, retrying short writes.
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileFailure) {
        var offset = 0
        while offset < bytes.count, let base = bytes.baseAddress {
            let count = posixWrite(descriptor, base + offset, bytes.count - offset)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw FileFailure(path: path, action: "write", code: count < 0 ? errno : EIO) }
            offset += count
        }
    }

    /// Puts `bytes` at `path` in one step: a new file at `temporaryPath` (created exclusively,
    /// with `mode`), renamed over `path`. `finish` runs on the new file before it is closed (to
    /// set its times). A link at `path` is replaced, never followed; nothing is left at
    /// `temporaryPath` after a failure.
    static func replace(atPath path: String, temporaryPath: String, with bytes: UnsafeRawBufferPointer, mode: mode_t = fileMode,
                        finish: (Int32) -> Void = { _ in }) throws(FileFailure) {
        try writeNew(atPath: temporaryPath, bytes, mode: mode, finish: finish)
        guard rename(temporaryPath, path) == 0 else {
            let code = errno
            unlink(temporaryPath)
            throw FileFailure(path: path, action: "replace", code: code)
        }
    }

    /// Puts `bytes` at `path` only if nothing is there yet, in one step: a new file at
    /// `temporaryPath` linked to `path` with `link(2)`, which fails when the name is taken, so
    /// two writers racing for one name agree on the first one's bytes. Returns `false` when
    /// `path` already existed (its content is left alone).
    static func publish(atPath path: String, temporaryPath: String, with bytes: UnsafeRawBufferPointer,
                        mode: mode_t = fileMode) throws(FileFailure) -> Bool {
        try writeNew(atPath: temporaryPath, bytes, mode: mode)
        defer { unlink(temporaryPath) }
        if link(temporaryPath, path) == 0 { return true }
        guard errno == EEXIST else { throw FileFailure(path: path, action: "create", code: errno) }
        return false
    }

    /// Writes `bytes` to a new file at `path`, created exclusively (never through a link) with
    /// `mode`; nothing is left there after a failure.
    private static func writeNew(atPath path: String, _ bytes: UnsafeRawBufferPointer, mode: mode_t,
                                 finish: (Int32) -> Void = { _ in }) throws(FileFailure) {
        let descriptor = try createNew(atPath: path, mode: mode)
        var isOpen = true
        do throws(FileFailure) {
            try writeAll(descriptor, bytes, path: path)
            finish(descriptor)
            isOpen = false
            guard close(descriptor) == 0 else { throw FileFailure(path: path, action: "save", code: errno) }
        } catch {
            if isOpen { close(descriptor) }
            unlink(path)
            throw error
        }
    }

    /// Creates a new file at `path` and opens it for writing: exclusively (`O_EXCL`, so never an
    /// existing file and never through a link), with `mode`. Nothing is left at `path` after a failure.
    static func createNew(atPath path: String, mode: mode_t = fileMode) throws(FileFailure) -> Int32 {
        if let code = FileAccessFaults.injected(opening: path) { throw FileFailure(path: path, action: "create", code: code) }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw FileFailure(path: path, action: "create", code: errno) }
        guard fchmod(descriptor, mode) == 0 else {
            let code = errno
            close(descriptor)
            unlink(path)
            throw FileFailure(path: path, action: "set the permissions of", code: code)
        }
        return descriptor
    }

    /// A name for a temporary file beside `path`: hidden, and unique to this writer.
    static func temporaryPath(besides path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let unique = String(UInt64.random(in: .min ... .max), radix: 16)
        return (folder.isEmpty ? "" : folder + "/") + "." + name + ".\(getpid())-\(unique).tmp"
    }

    private static func openRegular(atPath path: String, flags: Int32, mode: mode_t, action: String) throws(FileFailure) -> OpenedFile {
        if let code = FileAccessFaults.injected(opening: path), access(path, F_OK) == 0 {
            throw FileFailure(path: path, action: action, code: code)
        }
        let descriptor = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            // ELOOP is how O_NOFOLLOW reports a link (some BSDs say EMLINK).
            let code = errno
            if code == ELOOP || code == EMLINK {
                throw FileFailure(path: path, action: action, reason: "a symbolic link is in its place, and Convey does not write or read through one")
            }
            throw FileFailure(path: path, action: action, code: code)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw FileFailure(path: path, action: action, code: code)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw FileFailure(path: path, action: action, reason: "it is not a regular file")
        }
        // Blocking I/O again: the flag was only there so that opening a FIFO could not hang.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        if flags & O_CREAT != 0, fchmod(descriptor, mode) != 0 {
            let code = errno
            close(descriptor)
            throw FileFailure(path: path, action: "set the permissions of", code: code)
        }
        return OpenedFile(descriptor: descriptor, size: Int64(info.st_size))
    }
}

/// Why one of Convey's own files could not be created, opened, read or written.
struct FileFailure: Error, CustomStringConvertible, Sendable {
    /// The file.
    let path: String
    /// What was being done: "create", "open", "read"…
    let action: String
    /// The `errno` of the failure, when the system gave one.
    let code: Int32?
    /// What went wrong, in words.
    let reason: String

    init(path: String, action: String, code: Int32) {
        self.path = path
        self.action = action
        self.code = code
        reason = String(cString: strerror(code))
    }

    init(path: String, action: String, reason: String) {
        self.path = path
        self.action = action
        code = nil
        self.reason = reason
    }

    var description: String { "could not \(action) \(path): \(reason)" }
}

/// `read(2)` and `write(2)`, named apart from the `read` and `write` methods of the types that call them.
private func posixRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func posixWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
