import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The pipeline follows redirects itself, for every delivery, over a transport that never does
/// (a stub answers each hop as it comes, as both real transports now do).
@Suite("Redirect stage")
@ConveyActor
struct RedirectStageTests {
    private struct Hop: ServerTask {
        let server: ConveyServer
        let path: String
        var follows: Bool?
        var followsRedirects: Bool { follows ?? server.configuration.followsRedirects }
        var echoStyle: TaskEchoStyle { [.consoleMinimum, .recorded] }
    }

    /// `/old` redirects to `/new`, which answers "final"; `/loop` redirects to itself;
    /// `/long` redirects with a body longer than the stage drops; `/ftp` to an ftp URL.
    private func origin() -> StubOrigin {
        StubOrigin { request, _ in
            switch request.url.path {
            case "/old": return (302, ["Location": "/new"], "moved")
            case "/see-other": return (303, ["Location": "/new"], "")
            case "/loop": return (302, ["Location": "/loop"], "")
            case "/long": return (301, ["Location": "/new"], String(repeating: "x", count: Redirect.discardedBodyLimit * 3))
            case "/ftp": return (302, ["Location": "ftp://files.example/x"], "")
            default: return (200, [:], "final")
            }
        }
    }

    private func paths(_ origin: StubOrigin) -> [String?] {
        origin.requests.map { $0.url.path }
    }

    @Test func aStreamFollowsTheRedirectAndSeesOnlyTheFinalResponse() async throws {
        let origin = origin()
        let server = try stubServer(origin.transport)
        let response = try await Hop(server: server, path: "old").stream()
        var body = Data()
        for try await chunk in response.payload { body.append(chunk) }
        #expect(response.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self) == "final")
        #expect(response.request.url.path == "/new")
        #expect(paths(origin) == ["/old", "/new"])
    }

    @Test func aFileDownloadFollowsTheRedirectAndWritesOnlyTheFinalBody() async throws {
        let origin = origin()
        let server = try stubServer(origin.transport)
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-redirect-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "file")
        let response = try await Hop(server: server, path: "old").download(to: destination)
        #expect(response.statusCode == 200)
        #expect(try String(contentsOf: destination, encoding: .utf8) == "final")
        #expect(response.request.url.path == "/new")
        #expect(paths(origin) == ["/old", "/new"])
    }

    @Test func eachFollowedHopIsEchoedAndTheResponseIsTheLastHops() async throws {
        let origin = origin()
        let echo = EchoCapture()
        let server = try stubServer(origin.transport) { $0.echoSink = echo.sink }
        let response = try await Hop(server: server, path: "old").download()
        #expect(response.stringResult == "final")
        #expect(response.request.url.path == "/new")
        #expect(response.httpResponse.url?.path == "/new")
        let text = echo.text
        #expect(text.contains("stub.example/old"))
        #expect(text.contains("302"))
        #expect(text.contains("stub.example/new"))
    }

    @Test func eachHopOfAFileDownloadIsRecorded() async throws {
        let origin = origin()
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-redirect-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let recorder = TaskRecorder(folder: folder.appending(path: "records"))
        let server = try stubServer(origin.transport) { $0.recorder = recorder }
        _ = try await Hop(server: server, path: "old").download(to: folder.appending(path: "file"))
        let records = await recorder.records()
        let hops = records.map { "\($0.statusCode ?? 0) \($0.url ?? "?") attempt \($0.attempt)" }.sorted()
        #expect(hops == ["200 https://stub.example/new attempt 1", "302 https://stub.example/old attempt 1"])
        let redirect = try #require(records.first { $0.statusCode == 302 })
        #expect(Headers(redirect.responseHeaders)["Location"] == "/new")
    }

    @Test func aPOSTAnswered303GoesOnAsABodylessGET() async throws {
        let origin = origin()
        let server = try stubServer(origin.transport)
        let response = try await JSONUpload(server: server, path: "see-other", uploadPayload: ["note": "gone"]).download()
        #expect(response.stringResult == "final")
        let sent = origin.requests
        #expect(sent.map(\.method) == [.post, .get])
        #expect(sent.last?.body == nil)
        #expect(sent.last?.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func aLongRedirectBodyIsCutOffAndTheRedirectFollowed() async throws {
        let origin = origin()
        let response = try await Hop(server: try stubServer(origin.transport), path: "long").download()
        #expect(response.stringResult == "final")
        #expect(paths(origin) == ["/long", "/new"])
    }

    @Test func aChainLongerThanTheServersLimitFailsNamingTheLimit() async throws {
        let origin = origin()
        let server = try stubServer(origin.transport) { $0.maximumRedirects = 3 }
        let error = await #expect(throws: ConveyError.self) { try await Hop(server: server, path: "loop").download() }
        guard let failure = error?.transportFailure else {
            Issue.record("not a transport failure: \(String(describing: error))")
            return
        }
        #expect(failure.kind == .redirectRefused)
        #expect(failure.reason.contains("more than 3 redirects"))
        #expect(failure.url?.path == "/loop")
        #expect(origin.count == 4)
    }

    @Test func aRedirectToAnotherSchemeIsRefusedOnEveryDelivery() async throws {
        let origin = origin()
        let server = try stubServer(origin.transport)
        let memory = await #expect(throws: ConveyError.self) { try await Hop(server: server, path: "ftp").download() }
        let stream = await #expect(throws: ConveyError.self) { try await Hop(server: server, path: "ftp").stream() }
        for error in [memory, stream] {
            guard let failure = error?.transportFailure else {
                Issue.record("not a transport failure: \(String(describing: error))")
                continue
            }
            #expect(failure.kind == .redirectRefused)
        }
        #expect(paths(origin) == ["/ftp", "/ftp"])
    }

    @Test func aTaskThatDoesNotFollowGetsTheRedirectFromEveryDelivery() async throws {
        let origin = origin()
        let server = try stubServer(origin.transport) { $0.reportBadHTTPStatusAsError = false }
        let memory = try await Hop(server: server, path: "old", follows: false).download()
        #expect(memory.statusCode == 302)
        #expect(memory.header("Location") == "/new")
        let stream = try await Hop(server: server, path: "old", follows: false).stream()
        var body = Data()
        for try await chunk in stream.payload { body.append(chunk) }
        #expect(stream.statusCode == 302)
        #expect(String(decoding: body, as: UTF8.self) == "moved")
        #expect(paths(origin) == ["/old", "/old"])
    }
}
