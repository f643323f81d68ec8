import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A damaged `partition-key` never stops a disk cache: it gets a new key, the responses stored
/// for requests with credentials become misses, and the cache stores and hits again. A key file
/// someone else put there (a link, another user's, open to others) is still refused.
@Suite("Partition key healing")
@ConveyActor
struct PartitionKeyHealingTests {
    /// What happens to the key file between two runs of an app.
    enum Damage: String, CaseIterable, Sendable {
        case truncated, bitFlipped, missing, emptied, overlong

        func apply(to file: URL) throws {
            var bytes = try Data(contentsOf: file)
            switch self {
            case .truncated: bytes = bytes.prefix(bytes.count / 2)
            case .bitFlipped: bytes[CachePartitionKey.magic.count + 5] ^= 0x10
            case .missing:
                try FileManager.default.removeItem(at: file)
                return
            case .emptied: bytes = Data()
            case .overlong: bytes += Data(repeating: 0, count: 7)
            }
            try bytes.write(to: file)
            #expect(chmod(file.path, 0o600) == 0)
        }
    }

    private func origin() -> StubOrigin {
        StubOrigin { request, number in
            (200, ["Cache-Control": "max-age=600"], "\(request.value(forHTTPHeaderField: "Cookie") ?? "-") \(number)")
        }
    }

    private static let alice: Headers = ["Cookie": "s=alice"]

    @Test(arguments: Damage.allCases)
    func aDamagedKeyFileIsReplacedAndTheCacheKeepsWorking(damage: Damage) async throws {
        try await withTemporaryFolder { folder in
            let origin = origin()
            let keyFile = folder.appending(path: CachePartitionKey.fileName)
            let first = try DataCache(folder: folder, memoryCostLimit: 0)
            let firstServer = try cachingStubServer(origin, cache: first)
            _ = try await CacheProbeTask(server: firstServer, path: "me", requestHeaders: Self.alice).download()
            _ = try await CacheProbeTask(server: firstServer, path: "news").download()
            await first.flush()
            let oldKey = try CachePartitionKey.stored(in: folder)

            try damage.apply(to: keyFile)

            let healed = try DataCache(folder: folder, memoryCostLimit: 0)
            let server = try cachingStubServer(origin, cache: healed)
            // The response stored for alice's credentials was guarded by the old key: now a miss.
            let aliceAfter = try await CacheProbeTask(server: server, path: "me", requestHeaders: Self.alice).download()
            #expect(aliceAfter.cacheStatus == .network)
            #expect(aliceAfter.stringResult == "s=alice 3")
            // A response stored without credentials never depended on the key.
            let news = try await CacheProbeTask(server: server, path: "news").download()
            #expect(news.cacheStatus == .hit)
            #expect(news.stringResult == "- 2")
            // The cache works: what was just stored is a hit, from disk.
            await healed.flush()
            let aliceAgain = try await CacheProbeTask(server: server, path: "me", requestHeaders: Self.alice).download()
            #expect(aliceAgain.cacheStatus == .hit)
            #expect(aliceAgain.stringResult == "s=alice 3")
            #expect(origin.count == 3)

            // The new key file is sound, private, and what the next process reads.
            let newKey = try CachePartitionKey.stored(in: folder)
            #expect(newKey != oldKey)
            #expect(newKey == healed.partitionKey)
            let attributes = try FileManager.default.attributesOfItem(atPath: keyFile.path)
            #expect(attributes[.size] as? Int == CachePartitionKey.fileSize)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)
            let reopened = try cachingStubServer(origin, cache: DataCache(folder: folder, memoryCostLimit: 0))
            let aliceReopened = try await CacheProbeTask(server: reopened, path: "me", requestHeaders: Self.alice).download()
            #expect(aliceReopened.cacheStatus == .hit)
        }
    }

    @Test func aKeyFileOpenToOtherUsersIsRefusedAndLeftAlone() async throws {
        try await withTemporaryFolder { folder in
            _ = try DataCache(folder: folder)
            let keyFile = folder.appending(path: CachePartitionKey.fileName)
            // Damaged and open to others: refused, not healed, since someone else may have put it there.
            try Damage.truncated.apply(to: keyFile)
            #expect(chmod(keyFile.path, 0o644) == 0)
            let planted = try Data(contentsOf: keyFile)
            #expect(Self.refusal(folder)?.contains("readable or writable by other users") == true)
            #expect(try Data(contentsOf: keyFile) == planted)
        }
    }

    @Test(.enabled(if: geteuid() == 0, "only root can give a file to another user"))
    func aKeyFileOfAnotherUserIsRefusedAndLeftAlone() async throws {
        try await withTemporaryFolder { folder in
            _ = try DataCache(folder: folder)
            let keyFile = folder.appending(path: CachePartitionKey.fileName)
            try Damage.bitFlipped.apply(to: keyFile)
            let planted = try Data(contentsOf: keyFile)
            #expect(chown(keyFile.path, 1, 1) == 0)
            #expect(Self.refusal(folder)?.contains("belongs to another user") == true)
            #expect(try Data(contentsOf: keyFile) == planted)
        }
    }

    @Test func aKeyFileThatIsALinkIsRefusedEvenToAnotherKeyFile() async throws {
        try await withTemporaryFolder { folder in
            let elsewhere = folder.appending(path: "elsewhere")
            _ = try DataCache(folder: elsewhere)
            let cache = folder.appending(path: "cache")
            try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: cache.appending(path: CachePartitionKey.fileName),
                                                       withDestinationURL: elsewhere.appending(path: CachePartitionKey.fileName))
            #expect(Self.refusal(cache)?.contains("symbolic link") == true)
        }
    }

    /// The reason `DataCache(folder:)` gives for refusing `folder`, or `nil` when it opens.
    private static func refusal(_ folder: URL) -> String? {
        do {
            _ = try DataCache(folder: folder)
            Issue.record("DataCache(folder:) opened \(folder.path)")
            return nil
        } catch ConveyError.cacheFolderUnavailable(_, let reason) {
            return reason
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }
}
