import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The disk tier through `DataCache`: persistence, self-verification, eviction, concurrency.
@Suite("Disk cache")
struct DiskCacheTests {
    private func response(_ path: String, body: Data, headers: [String: String] = ["Cache-Control": "max-age=600"]) throws -> CachedResponse {
        CachedResponse(url: try testURL("https://disk.example/\(path)"), headers: headers, body: body)
    }

    private func url(_ path: String) throws -> URL { try testURL("https://disk.example/\(path)") }

    /// A cache on `folder` that keeps nothing in memory, so every read goes to disk.
    private func diskOnly(_ folder: URL, limit: Int = 1 << 24) throws -> DataCache {
        try DataCache(folder: folder, diskSizeLimit: limit, memoryCostLimit: 0)
    }

    private func entryFiles(in folder: URL) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { !$0.hasDirectoryPath && $0.lastPathComponent.count == 64 }
    }

    @Test func entriesSurviveANewCacheOnTheSameFolder() async throws {
        try await withTemporaryFolder { folder in
            let body = Data("persisted".utf8)
            await (try DataCache(folder: folder)).store(try response("kept?q=1", body: body, headers: ["ETag": "\"k\""]))
            let reopened = try DataCache(folder: folder)
            let found = await reopened.response(for: try url("kept?q=1"))
            #expect(found?.body == body)
            #expect(found?.eTag == "\"k\"")
            #expect(await reopened.response(for: try url("kept?q=2")) == nil)
            #expect(await reopened.statistics.diskHits == 1)
            #expect(await reopened.statistics.memoryEntryCount == 1)
        }
    }

    @Test func aCorruptFileIsDroppedNeverServed() async throws {
        try await withTemporaryFolder { folder in
            let cache = try diskOnly(folder)
            await cache.store(try response("corrupt", body: Data(repeating: 7, count: 10_000)))
            let file = try #require(entryFiles(in: folder).first)
            var bytes = try Data(contentsOf: file)
            bytes[bytes.count - 100] ^= 0xFF
            try bytes.write(to: file)
            #expect(await cache.response(for: try url("corrupt")) == nil)
            #expect(!FileManager.default.fileExists(atPath: file.path))
            #expect(await cache.statistics.droppedDiskEntries == 1)
        }
    }

    @Test func aTruncatedOrEmptyFileIsDroppedNeverServed() async throws {
        try await withTemporaryFolder { folder in
            let cache = try diskOnly(folder)
            for length in [0, 10, 5000] {
                await cache.store(try response("cut", body: Data(repeating: 1, count: 10_000)))
                let file = try #require(entryFiles(in: folder).first)
                try Data(try Data(contentsOf: file).prefix(length)).write(to: file)
                #expect(await cache.response(for: try url("cut")) == nil, "cut at \(length)")
            }
            #expect(await cache.statistics.droppedDiskEntries == 3)
        }
    }

    @Test func aFileHoldingAnotherKeyIsAMissAndIsLeftAlone() async throws {
        try await withTemporaryFolder { folder in
            let cache = try diskOnly(folder)
            await cache.store(try response("owner", body: Data("owner's".utf8)))
            let ownerFile = try #require(entryFiles(in: folder).first)
            // Simulate a name collision: the file for "victim" holds "owner"'s entry.
            let victimPath = DiskTier.path(forKey: CacheKey.key(for: try url("victim"), method: .get), inFolder: folder.standardizedFileURL.path)
            try FileManager.default.createDirectory(atPath: (victimPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: ownerFile.path, toPath: victimPath)
            #expect(await cache.response(for: try url("victim")) == nil)
            #expect(FileManager.default.fileExists(atPath: victimPath))
            #expect(await cache.statistics.droppedDiskEntries == 0)
            #expect(await cache.response(for: try url("owner"))?.body == Data("owner's".utf8))
        }
    }

    @Test func theDiskTierStaysUnderItsLimitAndKeepsTheRecentlyUsed() async throws {
        try await withTemporaryFolder { folder in
            let limit = 100_000
            let clock = ManualClock()
            let cache = try DataCache(folder: folder, diskSizeLimit: limit, memoryCostLimit: 0, clock: clock.cacheClock)
            let body = Data(repeating: 0xAB, count: 4000)
            // Each write and read stamps its file with the cache clock, one second apart.
            for index in 0..<20 {
                await cache.store(try response("item\(index)", body: body))
                clock.advance(1)
            }
            // Reading refreshes an entry's time, so item0 is now the most recently used.
            #expect(await cache.response(for: try url("item0")) != nil)
            clock.advance(1)
            for index in 20..<40 {
                await cache.store(try response("item\(index)", body: body))
                clock.advance(1)
            }
            await cache.trimDisk()

            let sizes = try entryFiles(in: folder).map { try #require(try $0.resourceValues(forKeys: [.fileSizeKey]).fileSize) }
            #expect(sizes.reduce(0, +) <= limit)
            #expect(await cache.statistics.diskSize <= limit)
            #expect(await cache.statistics.evictedDiskFiles > 0)
            #expect(await cache.response(for: try url("item0")) != nil)
            #expect(await cache.response(for: try url("item39")) != nil)
            #expect(await cache.response(for: try url("item1")) == nil)
        }
    }

    @Test func writingPastTheLimitStartsABackgroundSweep() async throws {
        try await withTemporaryFolder { folder in
            let limit = 50_000
            let cache = try diskOnly(folder, limit: limit)
            for index in 0..<30 { await cache.store(try response("bg\(index)", body: Data(count: 4000))) }
            let deadline = ContinuousClock.now + .seconds(20)
            while await cache.statistics.diskSize > limit, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(await cache.statistics.diskSize <= limit)
            #expect(await cache.statistics.evictedDiskFiles > 0)
        }
    }

    @Test func anEntryBiggerThanTheDiskLimitIsNotWritten() async throws {
        try await withTemporaryFolder { folder in
            let cache = try DataCache(folder: folder, diskSizeLimit: 1000)
            await cache.store(try response("big", body: Data(count: 5000)))
            #expect(entryFiles(in: folder).isEmpty)
            #expect(await cache.response(for: try url("big"))?.body.count == 5000)
        }
    }

    @Test func abandonedTemporaryFilesAreSweptAndFreshOnesKept() async throws {
        try await withTemporaryFolder { folder in
            let cache = try diskOnly(folder)
            let shard = folder.appending(path: "00")
            try FileManager.default.createDirectory(at: shard, withIntermediateDirectories: true)
            let abandoned = shard.appending(path: ".tmp-crashed-1"), fresh = shard.appending(path: ".tmp-writing-1")
            try Data("partial".utf8).write(to: abandoned)
            try Data("partial".utf8).write(to: fresh)
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: abandoned.path)
            await cache.trimDisk()
            #expect(!FileManager.default.fileExists(atPath: abandoned.path))
            #expect(FileManager.default.fileExists(atPath: fresh.path))
        }
    }

    @Test func removeAllEmptiesBothTiersButKeepsTheFolder() async throws {
        try await withTemporaryFolder { folder in
            let cache = try DataCache(folder: folder)
            for index in 0..<5 { await cache.store(try response("gone\(index)", body: Data("x".utf8))) }
            await cache.removeAll()
            #expect(entryFiles(in: folder).isEmpty)
            #expect(FileManager.default.fileExists(atPath: folder.path))
            #expect(await cache.response(for: try url("gone0")) == nil)
            #expect(await cache.statistics.memoryEntryCount == 0)
        }
    }

    @Test func anUnusableFolderIsReportedWhenTheCacheIsCreated() async throws {
        try await withTemporaryFolder { folder in
            let file = folder.appending(path: "plain-file")
            try Data().write(to: file)
            #expect {
                _ = try DataCache(folder: file.appending(path: "cache"))
            } throws: { error in
                guard let failure = (error as? ConveyError)?.cacheFailure else { return false }
                return failure.notCached == false && failure.url?.lastPathComponent == "cache"
            }
        }
    }

    @Test func concurrentReadersAndWritersNeverSeeAMixedEntry() async throws {
        try await withTemporaryFolder { folder in
            let cache = try DataCache(folder: folder, memoryCostLimit: 20_000)
            let keys = (0..<16).map { "shared\($0)" }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        for round in 0..<60 {
                            let key = keys[(worker * 7 + round) % keys.count]
                            if round % 3 == 0 {
                                let body = Data("\(key)|worker \(worker) round \(round)|".utf8) + Data(repeating: UInt8(worker), count: 2000 + round)
                                await cache.store(try response(key, body: body))
                            } else if let found = await cache.response(for: try url(key)) {
                                #expect(found.body.starts(with: Data("\(key)|".utf8)), "a read of \(key) returned another key's body")
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let reopened = try diskOnly(folder)
            for key in keys {
                let found = try #require(await reopened.response(for: try url(key)))
                #expect(found.body.starts(with: Data("\(key)|".utf8)))
            }
            #expect(await reopened.statistics.droppedDiskEntries == 0)
        }
    }

    // MARK: The folder's contents are input, not trust

    @Test func theFolderAndItsEntriesAreOwnerOnly() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let cacheFolder = folder.appending(path: "new/cache")
            let cache = try diskOnly(cacheFolder)
            await cache.store(try response("private", body: Data("a token".utf8)))
            let file = try #require(entryFiles(in: cacheFolder).first)
            #expect(try permissions(of: folder.appending(path: "new")) == 0o700)
            #expect(try permissions(of: cacheFolder) == 0o700)
            #expect(try permissions(of: file.deletingLastPathComponent()) == 0o700)
            #expect(try permissions(of: file) == 0o600)
        }
    }

    @Test func anEntryWhoseBodyLengthIsAllOnesIsDroppedNotATrap() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let cache = try diskOnly(folder)
            await cache.store(try response("crafted", body: Data("body".utf8)))
            let file = try #require(entryFiles(in: folder).first)
            var bytes = try Data(contentsOf: file)
            bytes.replaceSubrange(16..<24, with: [UInt8](repeating: 0xFF, count: 8))
            try bytes.write(to: file)
            #expect(await cache.response(for: try url("crafted")) == nil)
            #expect(!FileManager.default.fileExists(atPath: file.path))
            #expect(await cache.statistics.droppedDiskEntries == 1)
        }
    }

    @Test func aFIFOInAnEntrysPlaceIsNeverWaitedOnAndASoundEntryTakesItsPlace() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let cache = try diskOnly(folder)
            await cache.store(try response("fifo", body: Data("body".utf8)))
            let file = try #require(entryFiles(in: folder).first)
            try FileManager.default.removeItem(at: file)
            try makeFIFO(at: file)
            #expect(await cache.response(for: try url("fifo")) == nil)
            #expect(!FileManager.default.fileExists(atPath: file.path))
            await cache.store(try response("fifo", body: Data("again".utf8)))
            #expect(await cache.response(for: try url("fifo"))?.body == Data("again".utf8))
        }
    }

    @Test func aFolderInAnEntrysPlaceIsAMissNotACrash() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let cache = try diskOnly(folder)
            await cache.store(try response("folder", body: Data("body".utf8)))
            let file = try #require(entryFiles(in: folder).first)
            try FileManager.default.removeItem(at: file)
            try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
            #expect(await cache.response(for: try url("folder")) == nil)
            await cache.store(try response("folder", body: Data("again".utf8)))
            #expect(await cache.response(for: try url("folder")) == nil)
            #expect(await cache.statistics.diskWriteFailures == 1)
        }
    }

    @Test func aLinkInAnEntrysPlaceIsNeitherFollowedNorServed() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let cacheFolder = folder.appending(path: "cache"), outside = folder.appending(path: "outside")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            let cache = try diskOnly(cacheFolder)
            await cache.store(try response("linked", body: Data("a sound entry".utf8)))
            let file = try #require(entryFiles(in: cacheFolder).first)
            // The link points at a sound entry for this very key, kept outside the folder.
            let victim = outside.appending(path: "entry")
            try FileManager.default.moveItem(at: file, to: victim)
            let longAgo = Date(timeIntervalSince1970: 1_000_000_000)
            try FileManager.default.setAttributes([.modificationDate: longAgo], ofItemAtPath: victim.path)
            let before = try Data(contentsOf: victim)
            try FileManager.default.createSymbolicLink(at: file, withDestinationURL: victim)

            #expect(await cache.response(for: try url("linked")) == nil)
            #expect(try Data(contentsOf: victim) == before)
            #expect(try FileManager.default.attributesOfItem(atPath: victim.path)[.modificationDate] as? Date == longAgo)
            #expect(!isSymbolicLink(file))
        }
    }

    @Test func aLinkInAShardsPlaceIsNeitherWrittenThroughNorSwept() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let cacheFolder = folder.appending(path: "cache"), outside = folder.appending(path: "outside")
            try FileManager.default.createDirectory(at: cacheFolder, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            let precious = outside.appending(path: "precious")
            try Data(repeating: 1, count: 10_000).write(to: precious)
            for shard in (0..<256).map({ String(format: "%02x", $0) }) {
                try FileManager.default.createSymbolicLink(at: cacheFolder.appending(path: shard), withDestinationURL: outside)
            }
            let cache = try diskOnly(cacheFolder, limit: 1000)
            await cache.store(try response("through", body: Data("x".utf8)))
            await cache.trimDisk()
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["precious"])
            #expect(await cache.statistics.diskWriteFailures == 1)
        }
    }
}
