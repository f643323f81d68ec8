import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The secret key that names a cache's credential partitions (`CredentialPartition`).
///
/// A memory-only cache draws a new key per instance. A disk cache keeps its key in the file
/// `partition-key` in its folder (32 random bytes, mode 0600), so processes sharing the folder
/// name partitions alike and users keep their hits across restarts. The file is created
/// exclusively and published with `link(2)`, so two processes starting together agree on one key;
/// a key file that is a link, not a regular file, not the owner's, readable by others or of the
/// wrong size is refused with `ConveyError.cache` (`.folderUnavailable`) rather than trusted.
enum CachePartitionKey {
    /// The key's length in bytes.
    static let length = 32
    /// The key file's name inside the cache folder.
    static let fileName = "partition-key"

    /// A fresh random key.
    static func random() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The key stored in `folder`, created there when there is none yet.
    static func stored(in folder: URL) throws -> [UInt8] {
        let path = folder.standardizedFileURL.path + "/" + fileName
        for _ in 0..<3 {
            switch load(path) {
            case .found(let key): return key
            case .refused(let reason): throw failure(folder, reason)
            case .missing:
                if let created = try create(path, folder: folder) { return created }
            }
        }
        throw failure(folder, "\(fileName) kept changing while it was read")
    }

    private enum Reading {
        case found([UInt8])
        case missing
        case refused(String)
    }

    private static func load(_ path: String) -> Reading {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            return errno == ENOENT ? .missing : .refused("\(fileName) cannot be opened (\(String(cString: strerror(errno))))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return .refused("\(fileName) is not a regular file") }
        guard info.st_uid == geteuid() else { return .refused("\(fileName) belongs to another user") }
        guard info.st_mode & 0o077 == 0 else { return .refused("\(fileName) is readable or writable by other users") }
        guard info.st_size == off_t(length) else { return .refused("\(fileName) is not \(length) bytes long") }
        var key = [UInt8](repeating: 0, count: length)
        let count = key.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, length) }
        return count == length ? .found(key) : .refused("\(fileName) could not be read whole")
    }

    /// Writes a new key to a private temporary file and links it into place; `nil` when another
    /// process linked its key first (the caller reads that one).
    private static func create(_ path: String, folder: URL) throws -> [UInt8]? {
        let key = random()
        let temporary = path + ".tmp-" + String(UInt64.random(in: .min ... .max), radix: 16)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure(folder, "\(fileName) cannot be created (\(String(cString: strerror(errno))))") }
        defer { unlink(temporary) }
        let written = key.withUnsafeBytes { write(descriptor, $0.baseAddress, length) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == length, synced else { throw failure(folder, "\(fileName) could not be written") }
        if link(temporary, path) == 0 { return key }
        if errno == EEXIST { return nil }
        throw failure(folder, "\(fileName) cannot be put in place (\(String(cString: strerror(errno))))")
    }

    private static func failure(_ folder: URL, _ reason: String) -> ConveyError {
        .cache(CacheFailure(kind: .folderUnavailable, url: folder, reason: reason))
    }
}
