import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A disk cache whose files' protected data is unavailable (a locked device), made so by injecting
/// EPERM and EACCES into Convey's file opens: these tests run as root, which permission bits do not stop.
@Suite("A cache on a locked device")
struct LockedDeviceCacheTests {
    private let url = URL(string: "https://locked.example/feed")!
    private let body = Data("the feed".utf8)

    /// Every file in the folder and its bytes.
    private func snapshot(_ folder: URL) throws -> [String: Data] {
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []
        var bytes: [String: Data] = [:]
        for file in files where !file.hasDirectoryPath {
            bytes[file.path(percentEncoded: false)] = try Data(contentsOf: file)
        }
        return bytes
    }

    @Test(arguments: [EPERM, EACCES])
    func itOpensServesMissesAndDeletesNothingThenHitsOnceReadable(code: Int32) async throws {
        try await withTemporaryFolder { folder in
            await (try DataCache(folder: folder)).store(body, for: url, headers: ["Cache-Control": "max-age=600"])
            let before = try snapshot(folder)
            #expect(before.count == 2)

            let lock = FileAccessFaults.lockDevice(failing: code, under: folder.path(percentEncoded: false))
            let cache = try DataCache(folder: folder, memoryCostLimit: 0)
            #expect(await cache.response(for: url) == nil)
            #expect(await cache.response(for: url) == nil)
            #expect(await cache.statistics.droppedDiskEntries == 0)
            #expect(await cache.statistics.misses == 2)
            #expect(try snapshot(folder) == before)

            lock.remove()
            #expect(await cache.response(for: url)?.body == body)
            #expect(await cache.statistics.diskHits == 1)
        }
    }

    @Test func thePartitionKeyIsReadOnceAvailableAndAStandInNamesPartitionsMeanwhile() async throws {
        try await withTemporaryFolder { folder in
            let stored = try #require(try CachePartitionKey.stored(in: folder))
            let lock = FileAccessFaults.lockDevice(failing: EPERM, under: folder.path(percentEncoded: false))
            let keys = try PartitionKeys(folder: folder)
            #expect(!keys.isLoaded)
            let standIn = keys.current
            #expect(standIn != stored)
            #expect(keys.current == standIn)
            lock.remove()
            #expect(keys.current == stored)
            #expect(keys.isLoaded)
            #expect(try CachePartitionKey.stored(in: folder) == stored)
        }
    }

    @Test func aCacheOpenedLockedBeforeItHasAKeyCreatesItOnceUnlocked() async throws {
        try await withTemporaryFolder { folder in
            let lock = FileAccessFaults.lockDevice(failing: EACCES, under: folder.path(percentEncoded: false))
            let cache = try DataCache(folder: folder)
            #expect(!FileManager.default.fileExists(atPath: folder.appending(path: CachePartitionKey.fileName).path(percentEncoded: false)))
            let request = OutgoingRequest(url: url, fields: ["Authorization": "Bearer alice"])
            let lockedPartition = cache.partition(of: request, credentials: .standard)
            lock.remove()
            let partition = cache.partition(of: request, credentials: .standard)
            #expect(partition != lockedPartition)
            #expect(try CachePartitionKey.stored(in: folder) == cache.partitionKey)
            #expect(cache.partition(of: request, credentials: .standard) == partition)
        }
    }

    @Test func aPermissionErrorWhereTheSystemHasNoDataProtectionIsReportedNotAMiss() async throws {
        try await withTemporaryFolder { folder in
            await (try DataCache(folder: folder)).store(body, for: url, headers: ["Cache-Control": "max-age=600"])
            #expect(ProtectedData.systemAvailability == .absent)
            let denied = FileAccessFaults.inject(EPERM, under: folder.path(percentEncoded: false))
            defer { denied.remove() }
            #expect {
                try DataCache(folder: folder)
            } throws: { error in
                guard case ConveyError.cacheFolderUnavailable(_, let reason) = error else { return false }
                return reason.contains(CachePartitionKey.fileName) && reason.contains("Operation not permitted")
            }
        }
    }

    @Test func aDamagedKeyIsStillReplacedWhenReadable() async throws {
        try await withTemporaryFolder { folder in
            let keyFile = folder.appending(path: CachePartitionKey.fileName)
            _ = try DataCache(folder: folder)
            try Data(repeating: 1, count: 3).write(to: keyFile)
            let healed = try DataCache(folder: folder)
            #expect(try CachePartitionKey.stored(in: folder) == healed.partitionKey)
        }
    }
}
