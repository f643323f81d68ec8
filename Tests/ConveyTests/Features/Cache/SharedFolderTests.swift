import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Several processes writing and reading one cache folder at once. The test binary starts copies
/// of itself that run only `SharedFolderWriter`, pointed at the folder through the environment.
@Suite("Shared cache folder")
struct SharedFolderTests {
    static let keys = (0..<24).map { "https://shared.example/item/\($0)?v=1" }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/proc/self/exe"), "needs /proc/self/exe to start a copy of the test binary"))
    func twoOtherProcessesAndThisOneShareAFolderWithoutCorruptingIt() async throws {
        try await withTemporaryFolder { folder in
            let writers = try (1...2).map { try Self.startWriter(id: $0, folder: folder) }
            let cache = try DataCache(folder: folder, memoryCostLimit: 0)
            var round = 0
            while writers.contains(where: \.isRunning) || round < 60 {
                await SharedFolderWriter.step(cache: cache, writer: 0, round: round)
                round += 1
            }
            for writer in writers {
                writer.waitUntilExit()
                #expect(writer.terminationStatus == 0, "a writer process failed")
            }

            let verifier = try DataCache(folder: folder, memoryCostLimit: 0)
            for key in Self.keys {
                let url = try #require(URL(string: key))
                let entry = try #require(await verifier.response(for: url))
                let text = String(decoding: entry.body.prefix(200), as: UTF8.self)
                #expect(text.hasPrefix(key + "|"), "the entry for \(key) holds another body")
            }
            for writer in 1...2 {
                let own = try #require(URL(string: SharedFolderWriter.ownKey(writer: writer)))
                #expect(await verifier.response(for: own)?.body == Data("done".utf8), "writer \(writer) did not finish its work")
            }
            #expect(await verifier.statistics.droppedDiskEntries == 0)
            #expect(await cache.statistics.droppedDiskEntries == 0)
            let leftovers = FileManager.default.enumerator(atPath: folder.path)?.allObjects.compactMap { $0 as? String }
                .filter { $0.contains(".tmp-") } ?? []
            #expect(leftovers.isEmpty)
        }
    }

    private static func startWriter(id: Int, folder: URL) throws -> Process {
        let process = Process()
        process.executableURL = URL(filePath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--testing-library", "swift-testing", "--filter", "SharedFolderWriter"]
        var environment = ProcessInfo.processInfo.environment
        environment[SharedFolderEnvironment.folder] = folder.path
        environment[SharedFolderEnvironment.writer] = String(id)
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }
}

/// The environment variables that turn a copy of the test binary into a writer.
enum SharedFolderEnvironment {
    static let folder = "CONVEY_SHARED_CACHE_FOLDER"
    static let writer = "CONVEY_SHARED_CACHE_WRITER"
}

/// The work of one process sharing the folder; runs as a test only inside a started copy.
@Suite("SharedFolderWriter", .enabled(if: ProcessInfo.processInfo.environment[SharedFolderEnvironment.folder] != nil))
struct SharedFolderWriter {
    /// A key only `writer` writes, once its rounds are done: proof that the copy really ran.
    static func ownKey(writer: Int) -> String { "https://shared.example/writer/\(writer)/done" }

    /// One round: write one key with a body naming it and this writer, read another and check it.
    static func step(cache: DataCache, writer: Int, round: Int) async {
        let keys = SharedFolderTests.keys
        let key = keys[(round * 5 + writer) % keys.count]
        let body = Data("\(key)|writer \(writer)|round \(round)|".utf8) + Data(repeating: UInt8(truncatingIfNeeded: round), count: 1000 + (round % 7) * 1000)
        if let url = URL(string: key) {
            await cache.store(CachedResponse(url: url, headers: ["Cache-Control": "max-age=600"], body: body))
        }
        let other = keys[(round * 3 + 1) % keys.count]
        if let url = URL(string: other), let found = await cache.response(for: url) {
            #expect(found.body.starts(with: Data((other + "|").utf8)))
        }
    }

    @Test func writeAndReadTheSharedFolder() async throws {
        let environment = ProcessInfo.processInfo.environment
        let folder = URL(filePath: try #require(environment[SharedFolderEnvironment.folder]))
        let writer = Int(environment[SharedFolderEnvironment.writer] ?? "") ?? 9
        let cache = try DataCache(folder: folder, memoryCostLimit: 0)
        for round in 0..<150 { await Self.step(cache: cache, writer: writer, round: round) }
        #expect(await cache.statistics.droppedDiskEntries == 0)
        let own = try #require(URL(string: Self.ownKey(writer: writer)))
        await cache.store(CachedResponse(url: own, body: Data("done".utf8)))
    }
}
