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
/// `partition-key` in its folder, so processes sharing the folder name partitions alike and users
/// keep their hits across restarts. The file (mode 0600) holds a magic, the 32 random bytes and
/// their XXH64 checksum, so a cut-short or corrupted file is told from a sound one.
///
/// - A missing file is created with `OwnerOnlyFiles.publish`, so two processes starting together
///   agree on one key.
/// - A damaged file (wrong size, wrong magic or checksum, or a failed read) is replaced by a new
///   key: the partitioned entries stored under the old one are never matched again and answer as
///   misses, so a crash mid-write or a bad restore costs hits, never the cache. Two processes
///   healing the same file at once may each keep their own key until they restart, which costs
///   hits only.
/// - A file that is a link, not a regular file, not the owner's, or open to other users is
///   refused with `ConveyError.cacheFolderUnavailable` rather than trusted or replaced:
///   someone else put it there.
enum CachePartitionKey {
    /// The key's length in bytes.
    static let length = 32
    /// The key file's name inside the cache folder.
    static let fileName = "partition-key"
    /// The first bytes of a key file.
    static let magic: [UInt8] = Array("CVYK".utf8)
    /// The key file's size: the magic, the key, its XXH64 checksum.
    static let fileSize = magic.count + length + MemoryLayout<UInt64>.size

    /// A fresh random key.
    static func random() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The bytes of a key file holding `key`.
    static func fileBytes(_ key: [UInt8]) -> [UInt8] {
        let checksum = XXH64.hash(key)
        return magic + key + withUnsafeBytes(of: checksum.littleEndian) { Array($0) }
    }

    /// The key in a key file's bytes, or `nil` when they are not a sound key file.
    static func key(inFile bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count == fileSize, bytes.starts(with: magic) else { return nil }
        let key = Array(bytes[magic.count..<magic.count + length])
        return fileBytes(key) == bytes ? key : nil
    }

    /// The key stored in `folder`: created there when there is none yet, replaced when the file is
    /// damaged; `nil` when its data is protected and unavailable for now (a locked device:
    /// `ProtectedData`), which is not damage: the file is kept, and read again later.
    static func stored(in folder: URL) throws -> [UInt8]? {
        let path = folder.standardizedFileURL.path + "/" + fileName
        do {
            for _ in 0..<3 {
                switch try load(path, folder: folder) {
                case .key(let key):
                    return key
                case .missing:
                    let key = random()
                    let created = try fileBytes(key).withUnsafeBytes { bytes throws(FileFailure) in
                        try OwnerOnlyFiles.publish(atPath: path, temporaryPath: OwnerOnlyFiles.temporaryPath(besides: path), with: bytes)
                    }
                    // Another process published its key first: read that one.
                    if created { return key }
                case .damaged:
                    // Replaced, then read again: if another process healed it at the same moment, the later file wins here too.
                    try replace(atPath: path, with: fileBytes(random()))
                }
            }
        } catch let failure as FileFailure {
            if ProtectedData.isUnavailable(failure) { return nil }
            throw self.failure(folder, failure.description)
        }
        throw failure(folder, "\(fileName) kept changing while it was read")
    }

    /// Puts `bytes` at `path` in place of what is there.
    private static func replace(atPath path: String, with bytes: [UInt8]) throws {
        let temporaryPath = OwnerOnlyFiles.temporaryPath(besides: path)
        try bytes.withUnsafeBytes { try OwnerOnlyFiles.replace(atPath: path, temporaryPath: temporaryPath, with: $0) }
    }

    /// What `load` found.
    private enum Loaded {
        case key([UInt8])
        case missing
        case damaged
    }

    /// The key at `path`. A file that is not the owner's own regular, private file is refused; a
    /// sound one's key is returned, anything else in such a file is damage.
    private static func load(_ path: String, folder: URL) throws -> Loaded {
        guard let file = try OwnerOnlyFiles.openForReading(atPath: path) else { return .missing }
        defer { close(file.descriptor) }
        var info = stat()
        guard fstat(file.descriptor, &info) == 0, info.st_uid == geteuid() else { throw failure(folder, "\(fileName) belongs to another user") }
        guard info.st_mode & 0o077 == 0 else { throw failure(folder, "\(fileName) is readable or writable by other users") }
        guard file.size == Int64(fileSize) else { return .damaged }
        let bytes: [UInt8]
        do {
            bytes = try OwnerOnlyFiles.readAll(file, limit: fileSize, path: path)
        } catch where ProtectedData.isUnavailable(error) {
            throw error
        } catch {
            return .damaged
        }
        guard let key = key(inFile: bytes) else { return .damaged }
        return .key(key)
    }

    private static func failure(_ folder: URL, _ reason: String) -> ConveyError {
        .cacheFolderUnavailable(folder: folder, reason: reason)
    }
}

/// One cache's partition key, as `DataCache` uses it: a fresh one for a memory-only cache; for a
/// disk cache, the one stored in its folder (`CachePartitionKey.stored`).
///
/// While the stored key's data is unavailable (a locked device), a stand-in key of this instance's
/// own names partitions: requests with credentials then miss what is stored under the real key,
/// and what is stored meanwhile is never matched once the real key is read. The stored key is read
/// again at each use until it can be.
final class PartitionKeys: Sendable {
    /// The stored key once read (or the fresh one); `nil` while it is unavailable. Reads of the
    /// key file happen holding the lock, so two uses never read it at once.
    private let key: InlineLocked<[UInt8]?>
    private let folder: URL?
    private let standIn = CachePartitionKey.random()

    /// A fresh key, for a memory-only cache.
    init() {
        key = InlineLocked(CachePartitionKey.random())
        folder = nil
    }

    /// The key stored in `folder`, or a stand-in until it can be read. Throws when the key file is
    /// someone else's (see `CachePartitionKey`).
    init(folder: URL) throws {
        self.folder = folder
        key = InlineLocked(try CachePartitionKey.stored(in: folder))
    }

    /// Whether the stored key was read (always, for a memory-only cache).
    var isLoaded: Bool { key.withLock { $0 != nil } }

    /// The key: the stored one, read again while it was unavailable; the stand-in meanwhile.
    var current: [UInt8] {
        key.withLock { key in
            if let key { return key }
            if let folder, let loaded = (try? CachePartitionKey.stored(in: folder)) ?? nil {
                key = loaded
                return loaded
            }
            return standIn
        }
    }
}
