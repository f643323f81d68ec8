import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct ProfileTask: DownloadingTask {
    typealias DownloadPayload = Data
    let server: ConveyServer
    var path: String { "profile" }
    var queryParameters: [String: String]? { ["token": "tok-query", "page": "2"] }
    var echoStyle: TaskEchoStyle { [.consoleFull, .recorded] }
    var headers: Headers {
        get async throws { ["Cookie": "s=cookie-req"] }
    }
}

/// Every secret the tests below send or receive; none may appear in any output.
private let secrets = ["pw-user1nfo", "tok-query", "cookie-req", "cookie-resp", "pw-location", "tok-location",
                       "cookie-body", "tok-body", "pw-redirect"]

private func leaked(in text: String) -> [String] { secrets.filter(text.contains) }

/// Every file under `folder`, as text.
private func filesText(_ folder: URL) throws -> String {
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false))
    return try names.map { String(decoding: try Data(contentsOf: folder.appending(path: $0)), as: UTF8.self) }.joined(separator: "\n")
}

@Suite("Secrets and escape sequences in echo and recordings")
@ConveyActor
struct EchoSecretsTests {
    let sink = EchoCapture()
    let folder = FileManager.default.temporaryDirectory.appending(path: "convey-echo-secrets-\(UUID().uuidString)")

    func server(_ transport: StubTransport) throws -> ConveyServer {
        var configuration = ServerConfiguration(echoSink: sink.sink)
        configuration.recorder = TaskRecorder(folder: folder, bodyLimit: 100_000)
        let remote = try #require(Remote(name: "stub", string: "https://alice:pw-user1nfo@stub.example"))
        let server = ConveyServer(remote: remote, configuration: configuration)
        server.transport = transport
        return server
    }

    @Test func noPasswordTokenOrCookieReachesEchoOrARecording() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = #"{"cookie": "cookie-body", "url": "https://alice:pw-user1nfo@stub.example/?token=tok-body", "name": "Ada"}"#
        let server = try server(StubTransport { request in
            TransportResponse(url: request.request.url, statusCode: 200, headers: Headers([
                Header(name: "Content-Type", value: "application/json"),
                Header(name: "Set-Cookie", value: "s=cookie-resp"),
                Header(name: "Content-Location", value: "https://bob:pw-location@next.example/?token=tok-location"),
            ]), body: Data(body.utf8))
        })

        _ = try await ProfileTask(server: server).download()
        await server.configuration.recorder?.flush()

        let records = try filesText(folder)
        #expect(sink.text.contains("[Convey] GET https://stub.example/profile?page=2&token=‹redacted›"))
        #expect(sink.text.contains("Content-Location: https://‹redacted›@next.example/?token=‹redacted›"))
        #expect(records.contains("https://‹redacted›@next.example/?token=‹redacted›"))
        #expect(leaked(in: sink.text) == [])
        #expect(leaked(in: records) == [])
    }

    @Test func aRefusedRedirectToAURLWithAPasswordIsEchoedAndRecordedMasked() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try server(StubTransport { request in
            throw AllowedSchemes.refusedRedirect(from: request.request.url,
                                                 to: try #require(URL(string: "ftp://mallory:pw-redirect@evil.example/?token=tok-location")))
        })

        await #expect(throws: ConveyError.self) { _ = try await ProfileTask(server: server).download() }
        await server.configuration.recorder?.flush()

        let records = try filesText(folder)
        #expect(sink.text.contains("Redirect refused: redirect to ftp://‹redacted›@evil.example/?token=‹redacted› refused"))
        #expect(records.contains("redirect to ftp://‹redacted›@evil.example/?token=‹redacted› refused"))
        #expect(leaked(in: sink.text) == [])
        #expect(leaked(in: records) == [])
    }

    @Test func escapeSequencesFromTheServerReachTheSinkEscaped() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try server(StubTransport { request in
            TransportResponse(url: request.request.url, statusCode: 200, headers: Headers([
                Header(name: "Content-Type", value: "text/plain"),
                Header(name: "X-Title", value: "\u{1B}]0;pwned\u{07}"),
            ]), body: Data("\u{1B}]0;title\u{07}\u{1B}[2J\u{9B}31m done".utf8))
        })

        _ = try await ProfileTask(server: server).download()

        #expect(!sink.text.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{9B}" })
        #expect(sink.text.contains(#"X-Title: \u{1B}]0;pwned\u{7}"#))
        #expect(sink.text.contains(#"\u{1B}]0;title\u{7}\u{1B}[2J\u{9B}31m done"#))
    }
}

@Suite("Secrets on the wire in echo and recordings", .wire)
@ConveyActor
struct EchoSecretsWireTests {
    private struct Redirecting: DownloadingTask {
        typealias DownloadPayload = Data
        let server: ConveyServer
        var path: String { "redirect-to" }
        var queryParameters: [String: String]? { ["url": "ftp://mallory:pw-redirect@evil.example/", "status_code": "302"] }
        var echoStyle: TaskEchoStyle { [.consoleMinimum, .recorded] }
    }

    @Test func aRefusedRedirectIsRecordedWithoutTheLocationsPassword() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-echo-secrets-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let sink = EchoCapture()
        let server = try httpbinServer {
            $0.echoSink = sink.sink
            $0.recorder = TaskRecorder(folder: folder)
        }

        let error = await #expect(throws: ConveyError.self) { _ = try await Redirecting(server: server).download() }
        await server.configuration.recorder?.flush()

        let records = try filesText(folder)
        #expect(records.contains("ftp://‹redacted›@evil.example/"), "\(records)")
        #expect(leaked(in: records) == [])
        #expect(leaked(in: sink.text) == [])
        #expect(leaked(in: String(describing: error)) == [])
    }
}
