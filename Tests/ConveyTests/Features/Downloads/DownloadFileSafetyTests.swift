import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The files a download creates, through a stub: owner-only unless asked otherwise, never
/// written through a link planted beside the destination, and one download per destination.
@Suite("Download files", .timeLimit(.minutes(5)))
@ConveyActor
struct DownloadFileSafetyTests {
    private struct Fetch: DownloadingTask {
        let server: ConveyServer
        var path: String { "file" }
        var echoStyle: TaskEchoStyle { .none }
    }

    private struct SharedReport: FileDownloadingTask {
        let server: ConveyServer
        let destination: URL
        var path: String { "file" }
        var echoStyle: TaskEchoStyle { .none }
        var downloadedFilePermissions: Int { 0o640 }
    }

    private static let body = Data((0..<200_000).map { UInt8($0 % 251) })

    private func server(_ transport: any ConveyTransport) throws -> ConveyServer {
        let remote = Remote(name: "stub", url: try #require(URL(string: "https://example.test")))
        let server = ConveyServer(remote: remote, configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        server.transport = transport
        return server
    }

    private func wholeFile(status: Int = 200, body: Data = DownloadFileSafetyTests.body) -> StubTransport {
        StubTransport { request in
            TransportResponse(url: request.request.url, statusCode: status,
                              headers: ["ETag": "\"v1\"", "Content-Length": "\(body.count)"], body: body)
        }
    }

    private func downloadFailure(_ error: (any Error)?) -> (destination: URL, reason: String)? {
        guard let failure = (error as? ConveyError)?.downloadFailure else { return nil }
        return failure
    }

    // MARK: Links and other things planted beside the destination

    @Test func aLinkPlantedAtThePartialFileIsNeverFollowed() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let destination = folder.appending(path: "file.bin")
            let planted = try PlantedLink(at: PartialDownload(destination: destination).file, victimFolder: folder)
            let error = await #expect(throws: ConveyError.self) { try await Fetch(server: try server(wholeFile())).download(to: destination) }
            #expect(downloadFailure(error)?.reason.contains("symbolic link") == true)
            #expect(planted.victimIsUntouched)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
        }
    }

    @Test func linksPlantedAtTheRecordAndTheDestinationAreReplacedNotFollowed() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let destination = folder.appending(path: "file.bin")
            let partial = PartialDownload(destination: destination)
            let atRecord = try PlantedLink(at: partial.recordFile, victimFolder: folder)
            let atDestination = try PlantedLink(at: destination, victimFolder: folder)
            try await Fetch(server: try server(wholeFile())).download(to: destination)
            #expect(atRecord.victimIsUntouched)
            #expect(atDestination.victimIsUntouched)
            #expect(!isSymbolicLink(destination))
            #expect(try Data(contentsOf: destination) == Self.body)
            #expect(!FileManager.default.fileExists(atPath: partial.recordFile.path))
        }
    }

    @Test func aFIFOAtThePartialFileFailsTheDownloadWithoutBlocking() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let destination = folder.appending(path: "file.bin")
            try makeFIFO(at: PartialDownload(destination: destination).file)
            let error = await #expect(throws: ConveyError.self) { try await Fetch(server: try server(wholeFile())).download(to: destination) }
            #expect(downloadFailure(error)?.reason.contains("not a regular file") == true)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
        }
    }

    /// A download to `/dev/null` once replaced the device with a regular file; a FIFO stands in for
    /// the device here, so that a regression cannot break the machine running the suite.
    @Test func aDestinationThatIsNotARegularFileIsNeverReplaced() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let destination = folder.appending(path: "device")
            try makeFIFO(at: destination)
            let error = await #expect(throws: ConveyError.self) { try await Fetch(server: try server(wholeFile())).download(to: destination) }
            #expect(downloadFailure(error)?.reason == "it is a FIFO, not a regular file, and is never replaced")
            let type = try FileManager.default.attributesOfItem(atPath: destination.path)[.type] as? FileAttributeType
            #expect(type != .typeRegular)
            #expect(!FileManager.default.fileExists(atPath: PartialDownload(destination: destination).file.path))
        }
    }

    // MARK: Permissions

    @Test func theFileAndTheFoldersCreatedForItAreOwnerOnly() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let destination = folder.appending(path: "new/inner/file.bin")
            try await Fetch(server: try server(wholeFile())).download(to: destination)
            #expect(try permissions(of: destination) == 0o600)
            #expect(try permissions(of: folder.appending(path: "new")) == 0o700)
            #expect(try permissions(of: folder.appending(path: "new/inner")) == 0o700)
        }
    }

    @Test func downloadingAgainOverAnOwnerOnlyFileLeavesItOwnerOnly() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let destination = folder.appending(path: "private.bin")
            try Data("older".utf8).write(to: destination)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: destination.path)
            try await Fetch(server: try server(wholeFile())).download(to: destination, resuming: false)
            #expect(try Data(contentsOf: destination) == Self.body)
            #expect(try permissions(of: destination) == 0o600)
        }
    }

    @Test func thePermissionsAnAppAsksForAreTheFilesPermissions() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let shared = folder.appending(path: "shared.bin"), report = folder.appending(path: "report.bin")
            try await Fetch(server: try server(wholeFile())).download(to: shared, permissions: 0o644)
            #expect(try permissions(of: shared) == 0o644)
            try await SharedReport(server: try server(wholeFile()), destination: report).download()
            #expect(try permissions(of: report) == 0o640)
        }
    }

    @Test func aModeWrittenInDecimalFailsTheDownloadBeforeAnythingIsWritten() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let file = folder.appending(path: "decimal.bin")
            let error = await #expect(throws: ConveyError.self) {
                try await Fetch(server: try server(wholeFile())).download(to: file, permissions: 644)
            }
            #expect(downloadFailure(error)?.reason.hasPrefix("permissions 644 are not a file mode from 0o000 to 0o777") == true)
            #expect(!FileManager.default.fileExists(atPath: file.path))
            #expect(!FileManager.default.fileExists(atPath: file.path + ".convey-partial"))
        }
    }

    @Test func aBrokenTransferLeavesAnOwnerOnlyPartialFileAndRecord() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let destination = folder.appending(path: "file.bin")
            let breaking = ConnectionDroppingTransport(base: wholeFile(), afterBytes: 1)
            await #expect(throws: ConveyError.self) { try await Fetch(server: try server(breaking)).download(to: destination) }
            let partial = PartialDownload(destination: destination)
            #expect(try permissions(of: partial.file) == 0o600)
            #expect(try permissions(of: partial.recordFile) == 0o600)
            #expect(partial.savedRecord() == PartialDownload.Record(url: "https://example.test/file", validator: "\"v1\"", total: Int64(Self.body.count)))
        }
    }

    // MARK: One download per destination

    @Test func aSecondDownloadToTheSameDestinationFailsWhileTheFirstRunsAndTheFileComesOutWhole() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let destination = folder.appending(path: "file.bin")
            let pausing = PausingTransport(answer: TransportResponse(
                url: try #require(URL(string: "https://example.test/file")), statusCode: 200,
                headers: ["ETag": "\"v1\"", "Content-Length": "\(Self.body.count)"], body: Self.body), pauseAfter: 70_000)
            let first = Task { @ConveyActor in try await Fetch(server: try server(pausing)).download(to: destination) }
            await pausing.waitUntilPaused()

            let error = await #expect(throws: ConveyError.self) { try await Fetch(server: try server(wholeFile())).download(to: destination) }
            #expect(downloadFailure(error)?.reason == "another download to this file is in progress")
            #expect(!FileManager.default.fileExists(atPath: destination.path))

            pausing.resume()
            let finished = try await first.value
            #expect(finished.payload == destination)
            #expect(try Data(contentsOf: destination) == Self.body)
            // The first download let go of the file: the next one runs.
            try await Fetch(server: try server(wholeFile(body: Data("next".utf8)))).download(to: destination)
            #expect(try Data(contentsOf: destination) == Data("next".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["file.bin"])
        }
    }

    // MARK: Progress

    @Test func anErrorBodyIsNotReportedAsDownloadProgress() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let reports = DownloadProgressLog()
            await #expect(throws: HTTPError.self) {
                try await Fetch(server: try server(wholeFile(status: 404, body: Data("not here".utf8))))
                    .download(to: folder.appending(path: "file.bin"), progress: { reports.add($0, $1) })
            }
            #expect(reports.last == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        }
    }
}

/// A transport that delivers the head and the first `pauseAfter` bytes of its answer, then waits
/// until `resume()` before delivering the rest: a download caught in the middle.
final class PausingTransport: ConveyTransport, @unchecked Sendable {
    private let answer: TransportResponse
    private let pauseAfter: Int
    private let paused: AsyncStream<Void>
    private let pausedContinuation: AsyncStream<Void>.Continuation
    private let gate: AsyncStream<Void>
    private let gateContinuation: AsyncStream<Void>.Continuation

    init(answer: TransportResponse, pauseAfter: Int) {
        self.answer = answer
        self.pauseAfter = pauseAfter
        (paused, pausedContinuation) = AsyncStream.makeStream(of: Void.self)
        (gate, gateContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        try sink.receive(answer.head)
        let body = answer.data
        _ = try body.prefix(pauseAfter).withUnsafeBytes { try sink.offer($0) }
        pausedContinuation.yield()
        for await _ in gate { break }
        _ = try body.dropFirst(pauseAfter).withUnsafeBytes { try sink.offer($0) }
        return answer.metrics
    }

    /// Returns once the first part has been delivered.
    func waitUntilPaused() async {
        for await _ in paused { return }
    }

    /// Lets the rest of the body through.
    func resume() { gateContinuation.yield() }
}
