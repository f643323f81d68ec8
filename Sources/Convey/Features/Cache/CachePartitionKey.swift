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
/// name partitions alike and users keep their hits across restarts. The file is published with
/// `OwnerOnlyFiles.publish`, so two processes starting together agree on one key;
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
        do {
            for _ in 0..<3 {
                if let key = try load(path, folder: folder) { return key }
                let key = random()
                let created = try key.withUnsafeBytes { bytes throws(FileFailure) in
                    try OwnerOnlyFiles.publish(atPath: path, temporaryPath: OwnerOnlyFiles.temporaryPath(besides: path), with: bytes)
                }
                // Another process published its key first: read that one.
                if created { return key }
            }
        } catch let failure as FileFailure {
            throw self.failure(folder, failure.description)
        }
        throw failure(folder, "\(fileName) kept changing while it was read")
    }

    /// The key at `path`, `nil` when there is none; a file that is not the owner's own regular,
    /// private file of the right size is refused.
    private static func load(_ path: String, folder: URL) throws -> [UInt8]? {
        guard let file = try OwnerOnlyFiles.openForReading(atPath: path) else { return nil }
        defer { close(file.descriptor) }
        var info = stat()
        guard fstat(file.descriptor, &info) == 0, info.st_uid == geteuid() else { throw failure(folder, "\(fileName) belongs to another user") }
        guard info.st_mode & 0o077 == 0 else { throw failure(folder, "\(fileName) is readable or writable by other users") }
        guard file.size == Int64(length) else { throw failure(folder, "\(fileName) is not \(length) bytes long") }
        return try OwnerOnlyFiles.readAll(file, limit: length, path: path)
    }

    private static func failure(_ folder: URL, _ reason: String) -> ConveyError {
        .cache(CacheFailure(kind: .folderUnavailable, url: folder, reason: reason))
    }
}
