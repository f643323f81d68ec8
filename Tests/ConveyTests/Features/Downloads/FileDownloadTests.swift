import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Downloads to a file against the local nginx (byte ranges, strong ETags, a 16 MiB file): the
/// file is complete or absent, a broken transfer resumes exactly, a changed file starts over.
@Suite("Downloads to a file", .wire)
@ConveyActor
struct FileDownloadTests {
    private struct BigFile: DownloadingTask {
        let server: ConveyServer
        var path: String { "16m.bin" }
        var echoStyle: TaskEchoStyle { .none }
        var configuration: TaskConfiguration? { TaskConfiguration(maximumResponseSize: 32 << 20) }
    }

    private struct Missing: FileDownloadingTask {
        let server: ConveyServer
        let destination: URL
        var path: String { "no-such-file.bin" }
        var echoStyle: TaskEchoStyle { .none }
    }

    private let folder = FileManager.default.temporaryDirectory.appending(path: "convey-downloads-\(UUID().uuidString)")

    private func server(transport: (any ConveyTransport)? = nil) throws -> ConveyServer {
        let server = ConveyServer(remote: try TestServers.nginx(), configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        if let transport { server.transport = transport }
        return server
    }

    private func original() async throws -> Data {
        try await BigFile(server: try server()).download().data
    }

    @Test func theFileArrivesWholeAndNothingIsLeftBeside() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "big.bin")
        let written = DownloadProgressLog()
        let response = try await BigFile(server: try server()).download(to: destination, progress: { written.add($0, $1) })
        #expect(response.payload == destination)
        #expect(response.statusCode == 200)
        #expect(response.request.value(forHTTPHeaderField: "Accept-Encoding") == "identity")
        #expect(try Data(contentsOf: destination) == (try await original()))
        #expect(written.last == DownloadProgress(bytesWritten: 16 << 20, totalBytes: 16 << 20))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["big.bin"])
    }

    @Test func aBrokenTransferLeavesTheDestinationAloneAndTheNextRunResumesIt() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "big.bin")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("previous version".utf8).write(to: destination)
        let breaking = try server()
        breaking.transport = ConnectionDroppingTransport(base: breaking.transport, afterBytes: 3 << 20)

        let error = await #expect(throws: ConveyError.self) { try await BigFile(server: breaking).download(to: destination) }
        guard case .transport = error else {
            Issue.record("expected a transport failure, got \(String(describing: error))")
            return
        }
        #expect(try Data(contentsOf: destination) == Data("previous version".utf8))
        let partial = PartialDownload(destination: destination)
        let record = try #require(partial.savedRecord())
        let keptSize = try #require(try FileManager.default.attributesOfItem(atPath: partial.file.path)[.size] as? NSNumber).int64Value
        #expect(record.url == (try TestServers.nginx().url.appending(path: "16m.bin").absoluteString))
        #expect(record.total == 16 << 20)
        #expect(keptSize >= 3 << 20)
        #expect(record.validator.hasPrefix("\""))

        let resumed = try await BigFile(server: try server()).download(to: destination)
        #expect(resumed.statusCode == 206)
        #expect(resumed.request.value(forHTTPHeaderField: "Range") == "bytes=\(keptSize)-")
        #expect(resumed.request.value(forHTTPHeaderField: "If-Range") == record.validator)
        // Byte for byte: hashing 16 MiB in a debug build holds a pool thread for seconds.
        #expect(try Data(contentsOf: destination) == (try await original()))
        #expect(!FileManager.default.fileExists(atPath: partial.file.path))
        #expect(!FileManager.default.fileExists(atPath: partial.recordFile.path))
    }

    @Test func aPartialFileOfAnotherVersionIsReplacedNotExtended() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "big.bin")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let partial = PartialDownload(destination: destination)
        try Data(repeating: 0xAB, count: 1000).write(to: partial.file)
        try partial.saveRecord(.init(url: try TestServers.nginx().url.appending(path: "16m.bin").absoluteString, validator: "\"older-version\""))

        let response = try await BigFile(server: try server()).download(to: destination)
        #expect(response.request.value(forHTTPHeaderField: "If-Range") == "\"older-version\"")
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: destination) == (try await original()))
    }

    @Test func anErrorStatusLeavesTheDestinationUntouched() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "kept.txt")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: destination)
        let error = await #expect(throws: HTTPError.self) { try await Missing(server: try server(), destination: destination).download() }
        #expect(error?.statusCode == 404)
        #expect(try Data(contentsOf: destination) == Data("keep me".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["kept.txt"])
    }
}

/// Byte-exact rules, through a stub: what a `206` must be to extend a partial file.
@Suite("Download resume rules")
@ConveyActor
struct DownloadResumeRuleTests {
    private struct Fetch: DownloadingTask {
        let server: ConveyServer
        var path: String { "file" }
        var echoStyle: TaskEchoStyle { .none }
    }

    private let folder = FileManager.default.temporaryDirectory.appending(path: "convey-resume-\(UUID().uuidString)")

    private func resumeFrom(_ bytes: String, validator: String = "\"v1\"", total: Int64? = nil,
                            answer: TransportResponse) async throws -> (Result<ServerResponse<URL>, any Error>, PartialDownload) {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = folder.appending(path: "file")
        let partial = PartialDownload(destination: destination)
        try Data(bytes.utf8).write(to: partial.file)
        let remote = Remote(name: "stub", url: try #require(URL(string: "https://example.test")))
        try partial.saveRecord(.init(url: remote.url.appending(path: "file").absoluteString, validator: validator, total: total))
        let server = ConveyServer(remote: remote, configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        server.transport = StubTransport { _ in answer }
        do {
            return (.success(try await Fetch(server: server).download(to: destination)), partial)
        } catch {
            return (.failure(error), partial)
        }
    }

    @Test func a206ThatContinuesThePartialFileExactlyIsAppended() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try #require(URL(string: "https://example.test/file"))
        let (result, partial) = try await resumeFrom("hello ", answer: TransportResponse(
            url: url, statusCode: 206, headers: ["Content-Range": "bytes 6-10/11", "ETag": "\"v1\""], body: Data("world".utf8)))
        #expect(try Data(contentsOf: try result.get().payload) == Data("hello world".utf8))
        #expect(!FileManager.default.fileExists(atPath: partial.file.path))
    }

    @Test func a206AtAnotherOffsetFailsAndDropsThePartialFile() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try #require(URL(string: "https://example.test/file"))
        let (result, partial) = try await resumeFrom("hello ", answer: TransportResponse(
            url: url, statusCode: 206, headers: ["Content-Range": "bytes 3-10/11", "ETag": "\"v1\""], body: Data("lo world".utf8)))
        #expect(throws: ConveyError.self) { try result.get() }
        #expect(!FileManager.default.fileExists(atPath: partial.file.path))
        #expect(!FileManager.default.fileExists(atPath: partial.destination.path))
    }

    @Test func a206OfAnotherVersionFailsAndDropsThePartialFile() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try #require(URL(string: "https://example.test/file"))
        let (result, partial) = try await resumeFrom("hello ", answer: TransportResponse(
            url: url, statusCode: 206, headers: ["Content-Range": "bytes 6-10/11", "ETag": "\"v2\""], body: Data("world".utf8)))
        #expect(throws: ConveyError.self) { try result.get() }
        #expect(!FileManager.default.fileExists(atPath: partial.file.path))
    }

    @Test func aShortBodyIsNotPutInPlace() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try #require(URL(string: "https://example.test/file"))
        let (result, partial) = try await resumeFrom("hello ", answer: TransportResponse(
            url: url, statusCode: 206, headers: ["Content-Range": "bytes 6-10/11", "ETag": "\"v1\""], body: Data("wor".utf8)))
        let error = #expect(throws: ConveyError.self) { try result.get() }
        guard let failure = error?.downloadFailure else {
            Issue.record("expected a download failure, got \(String(describing: error))")
            return
        }
        #expect(failure.reason == "received 9 of 11 bytes")
        #expect(!FileManager.default.fileExists(atPath: partial.destination.path))
    }

    @Test(arguments: [nil, "W/\"v1\"", "\"v2\""])
    func a206ThatDoesNotCarryTheStrongETagAskedForIsNotAppended(eTag: String?) async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try #require(URL(string: "https://example.test/file"))
        let (result, partial) = try await resumeFrom("hello ", answer: TransportResponse(
            url: url, statusCode: 206, headers: ["Content-Range": "bytes 6-10/11"].merging(eTag.map { ["ETag": $0] } ?? [:]) { $1 },
            body: Data("world".utf8)))
        let error = #expect(throws: ConveyError.self) { try result.get() }
        guard let failure = error?.downloadFailure else {
            Issue.record("expected a download failure, got \(String(describing: error))")
            return
        }
        #expect(failure.reason.contains("same version"))
        #expect(!FileManager.default.fileExists(atPath: partial.file.path))
        #expect(!FileManager.default.fileExists(atPath: partial.destination.path))
    }

    @Test(arguments: [true, false])
    func aWeakETagResumesUnderLastModifiedOrNotAtAll(hasLastModified: Bool) async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = folder.appending(path: "file")
        let remote = Remote(name: "stub", url: try #require(URL(string: "https://example.test")))
        let url = remote.url.appending(path: "file")
        let body = Data(repeating: 7, count: 200 << 10)
        let lastModified = "Tue, 24 Nov 2026 10:00:00 GMT"
        var headers = ["ETag": "W/\"v1\"", "Content-Length": String(body.count)]
        if hasLastModified { headers["Last-Modified"] = lastModified }
        let whole = TransportResponse(url: url, statusCode: 200, headers: headers, body: body)
        let server = ConveyServer(remote: remote, configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        server.transport = ConnectionDroppingTransport(base: StubTransport { _ in whole }, afterBytes: 64 << 10)
        await #expect(throws: ConveyError.self) { try await Fetch(server: server).download(to: destination) }

        let partial = PartialDownload(destination: destination)
        let record = partial.savedRecord()
        if hasLastModified {
            #expect(record?.validator == lastModified)
        } else {
            #expect(record == nil)
        }
        let seen = RequestLog()
        server.transport = StubTransport { request in
            seen.add(request)
            return whole
        }
        let finished = try await Fetch(server: server).download(to: destination)
        #expect(try Data(contentsOf: finished.payload) == body)
        let resumed = try #require(seen.requests.first).request
        #expect(resumed.value(forHTTPHeaderField: "Range") == (hasLastModified ? "bytes=\(64 << 10)-" : nil))
        #expect(resumed.value(forHTTPHeaderField: "If-Range") == (hasLastModified ? lastModified : nil))
    }

    @Test func a206ResumingUnderADateMustCarryThatLastModified() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try #require(URL(string: "https://example.test/file"))
        let date = "Tue, 01 Jul 2025 10:00:00 GMT"
        let (refused, partial) = try await resumeFrom("hello ", validator: date, answer: TransportResponse(
            url: url, statusCode: 206, headers: ["Content-Range": "bytes 6-10/11"], body: Data("world".utf8)))
        #expect(throws: ConveyError.self) { try refused.get() }
        #expect(!FileManager.default.fileExists(atPath: partial.destination.path))

        let (accepted, _) = try await resumeFrom("hello ", validator: date, answer: TransportResponse(
            url: url, statusCode: 206, headers: ["Content-Range": "bytes 6-10/11", "Last-Modified": date], body: Data("world".utf8)))
        #expect(try Data(contentsOf: try accepted.get().payload) == Data("hello world".utf8))
    }

    @Test func a206ThatDoesNotSayHowLargeTheFileIsIsNotPutInPlace() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try #require(URL(string: "https://example.test/file"))
        let (result, partial) = try await resumeFrom("hello ", answer: TransportResponse(
            url: url, statusCode: 206, headers: ["Content-Range": "bytes 6-10/*", "ETag": "\"v1\""], body: Data("wo".utf8)))
        #expect(throws: ConveyError.self) { try result.get() }
        #expect(!FileManager.default.fileExists(atPath: partial.destination.path))
    }

    @Test func a206OfAnotherSizeThanFirstAnnouncedIsNotAppended() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try #require(URL(string: "https://example.test/file"))
        let (result, partial) = try await resumeFrom("hello ", total: 11, answer: TransportResponse(
            url: url, statusCode: 206, headers: ["Content-Range": "bytes 6-12/13", "ETag": "\"v1\""], body: Data("world!!".utf8)))
        #expect(throws: ConveyError.self) { try result.get() }
        #expect(!FileManager.default.fileExists(atPath: partial.file.path))
        #expect(!FileManager.default.fileExists(atPath: partial.destination.path))
    }

    @Test func contentRangeValuesParseOnlyWhenWellFormed() {
        let whole = ContentRange("bytes 0-99/100")
        #expect(whole?.first == 0 && whole?.last == 99 && whole?.total == 100)
        #expect(ContentRange("bytes 5-9/*")?.total == nil)
        #expect(ContentRange("bytes 9-5/10") == nil)
        #expect(ContentRange("bytes 0-99/50") == nil)
        #expect(ContentRange("items 0-1/2") == nil)
        #expect(ContentRange("bytes */100") == nil)
    }
}

/// Wraps a transport so that the connection seems to drop after `afterBytes` of body: the sink
/// throws the error a transport reports for a lost connection, and the transfer stops there.
struct ConnectionDroppingTransport: ConveyTransport {
    let base: any ConveyTransport
    let afterBytes: Int

    func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        try await base.send(request, into: DroppingSink(sink: sink, afterBytes: afterBytes))
    }

    private final class DroppingSink: ResponseBodySink, @unchecked Sendable {
        let sink: any ResponseBodySink
        let afterBytes: Int
        private var passed = 0

        init(sink: any ResponseBodySink, afterBytes: Int) {
            self.sink = sink
            self.afterBytes = afterBytes
        }

        func receive(_ head: ResponseHead) throws { try sink.receive(head) }

        func whenReady(_ resume: @escaping @Sendable () -> Void) { sink.whenReady(resume) }

        var needsBackPressure: Bool { sink.needsBackPressure }

        func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
            guard passed < afterBytes else { throw URLError(.networkConnectionLost) }
            let taken = try sink.offer(bytes)
            if taken { passed += bytes.count }
            return taken
        }
    }
}

/// Download progress reports, in order.
final class DownloadProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var reports: [DownloadProgress] = []

    func add(_ bytesWritten: Int64, _ totalBytes: Int64?) {
        lock.withLock { reports.append(DownloadProgress(bytesWritten: bytesWritten, totalBytes: totalBytes)) }
    }
    var last: DownloadProgress? { lock.withLock { reports.last } }
}

/// A download's status is the run's one decision, from the task's `statusRule`: the file gets the
/// body of every status the rule returns, and an error body stays with the `HTTPError`.
@Suite("Download status rule")
@ConveyActor
struct DownloadStatusRuleTests {
    private struct Fetch: DownloadingTask {
        let server: ConveyServer
        let statusRule: StatusRule
        var path: String { "file" }
        var echoStyle: TaskEchoStyle { .none }
    }

    private let folder = FileManager.default.temporaryDirectory.appending(path: "convey-status-\(UUID().uuidString)")

    private func download(status: Int, body: String, rule: StatusRule) async throws -> ServerResponse<URL> {
        let server = try stubServer(.answering(status: status, headers: ["ETag": "\"v1\""], body: body))
        return try await Fetch(server: server, statusRule: rule).download(to: folder.appending(path: "file"))
    }

    @Test func aStatusTheRuleReturnsGoesToTheFileWithoutAResumeRecord() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let response = try await download(status: 404, body: "not here", rule: .standard.returning(404))
        #expect(response.statusCode == 404)
        #expect(try Data(contentsOf: response.payload) == Data("not here".utf8))
        #expect(PartialDownload(destination: response.payload).savedRecord() == nil)
    }

    @Test func aSuccessTheRuleThrowsForKeepsItsBodyForTheErrorAndWritesNoFile() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = await #expect(throws: HTTPError.self) {
            try await download(status: 200, body: "refused", rule: .standard.throwing(200))
        }
        #expect(error?.body == Data("refused".utf8))
        #expect(!FileManager.default.fileExists(atPath: folder.appending(path: "file").path))
    }
}
