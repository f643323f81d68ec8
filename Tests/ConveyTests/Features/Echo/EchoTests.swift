import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Login: JSONUploadingTask {
    struct Credentials: Encodable, Sendable { let user: String, password: String }
    let server: ConveyServer
    var style: TaskEchoStyle = .consoleFull
    var path: String { "login" }
    var method: HTTPMethod { .post }
    var queryParameters: [String: String]? { ["api_key": "k-123", "page": "2"] }
    var uploadPayload: Credentials? { Credentials(user: "ada", password: "hunter2") }
    var echoStyle: TaskEchoStyle { style }
    var headers: Headers {
        get async throws {
            ["Authorization": "Bearer s3cr3t", "Cookie": "session=abc", "X-API-Key": "key-9", "X-Trace": "visible"]
        }
    }
}

private struct Loud: EchoingTask {
    let server: ConveyServer
    var path: String { "loud" }
}

private struct Quiet: NonEchoingTask {
    let server: ConveyServer
    var path: String { "quiet" }
}

@Suite("Echo")
@ConveyActor
struct EchoTests {
    let sink = EchoCapture()
    let responseBody = #"{"token": "t-456", "name": "Ada", "items": [1, 2, 3]}"#

    func server(status: Int = 200, body: String? = nil) throws -> ConveyServer {
        try stubServer(.answering(status: status, headers: ["Content-Type": "application/json", "Set-Cookie": "id=42"],
                                  body: body ?? responseBody)) { $0.echoSink = sink.sink }
    }

    @Test func fullEchoShowsRequestResponseAndHidesEverySecret() async throws {
        try await Login(server: server()).send()
        let text = sink.text
        #expect(text.contains("[Convey] ▶ POST https://stub.example/login?api_key=‹redacted›&page=2"))
        #expect(text.contains("Authorization: ‹redacted›"))
        #expect(text.contains("Cookie: ‹redacted›"))
        #expect(text.contains("X-API-Key: ‹redacted›") || text.contains("X-Api-Key: ‹redacted›"))
        #expect(text.contains("Set-Cookie: ‹redacted›"))
        #expect(text.contains("X-Trace: visible"))
        #expect(text.contains(#""password" : "‹redacted›""#))
        #expect(text.contains(#""user" : "ada""#))
        #expect(text.contains("[Convey] ◀ 200"))
        #expect(text.contains(#""token" : "‹redacted›""#))
        #expect(text.contains(#""name" : "Ada""#))
        #expect(text.contains("→ 200"))
        for secret in ["s3cr3t", "session=abc", "key-9", "k-123", "hunter2", "t-456", "id=42"] {
            #expect(!text.contains(secret), "echo leaked \(secret)")
        }
    }

    @Test func minimumEchoIsOneLineWithMethodURLStatusTimeAndSizes() async throws {
        try await Login(server: server(), style: .consoleMinimum).send()
        let lines = sink.text.split(separator: "\n")
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(line.hasPrefix("[Convey] POST https://stub.example/login?api_key=‹redacted›&page=2 → 200 OK · "))
        // The time's shape, not its magnitude: `12.3 ms` or, on a busy machine, `1.90 s`.
        #expect(line.contains(/\ · \d+\.\d{1,2} m?s · ↑\d+ B ↓\d+ B$/), "\(line)")
        #expect(line.hasSuffix("↓\(responseBody.utf8.count) B"))
    }

    @Test func requestEchoShowsTheRequestButNotTheResponseBody() async throws {
        try await Login(server: server(), style: .consoleRequest).send()
        #expect(sink.text.contains("▶ POST"))
        #expect(!sink.text.contains("◀"))
    }

    @Test func bodiesAreCutAtTheChosenLimit() async throws {
        let long = "[" + Array(repeating: "\"0123456789\"", count: 1000).joined(separator: ",") + "]"
        try await Login(server: server(body: long), style: .console5k).send()
        #expect(sink.text.contains("… (cut: "))
        let responseBlock = try #require(sink.text.components(separatedBy: "◀").last)
        let itemsShown = responseBlock.components(separatedBy: "0123456789").count - 1
        #expect(itemsShown > 250 && itemsShown < 350, "5,000 characters of pretty JSON hold about 310 of the 1,000 items")
    }

    @Test func onlyIfErrorStaysQuietOnSuccessAndSpeaksOnFailure() async throws {
        try await Login(server: server(), style: [.consoleMinimum, .onlyIfError]).send()
        #expect(sink.text.isEmpty)
        await #expect(throws: HTTPError.self) { try await Login(server: server(status: 503), style: [.consoleMinimum, .onlyIfError]).send() }
        #expect(sink.text.contains("→ 503"))
        #expect(sink.text.contains("✗ HTTP 503"))
    }

    @Test func markersChooseFullEchoOrSilence() async throws {
        let server = try server()
        #expect(Loud(server: server).echoStyle == [.consoleFull, .recorded])
        #expect(Quiet(server: server).echoStyle == [])
        try await Quiet(server: server).send()
        #expect(sink.text.isEmpty)
        try await Loud(server: server).send()
        #expect(sink.text.contains("◀ 200"))
    }

    @Test func taskConfigurationOverridesTheEchoStyle() async throws {
        struct Configured: ServerTask {
            let server: ConveyServer
            var path: String { "x" }
            var configuration: TaskConfiguration? { .init(echoStyle: .consoleMinimum) }
        }
        try await Configured(server: server()).send()
        #expect(sink.text.hasPrefix("[Convey] GET https://stub.example/x → 200"))
    }

    @Test func defaultStylePrintsNothing() async throws {
        struct Plain: ServerTask {
            let server: ConveyServer
            var path: String { "x" }
        }
        let server = try server()
        #expect(Plain(server: server).echoStyle == .recorded)
        try await Plain(server: server).send()
        #expect(sink.text.isEmpty)
    }

    @Test func binaryBodiesShowTheirSize() {
        let formatter = EchoFormatter(style: .consoleFull, redaction: .standard)
        #expect(formatter.render(body: Data([0xFF, 0x00, 0xFE]), contentType: "image/png") == "<3 B of binary data>")
    }

    @Test func formBodiesHideSecretFields() {
        let formatter = EchoFormatter(style: .consoleFull, redaction: .standard)
        #expect(formatter.render(body: Data("user=ada&password=x%20y".utf8), contentType: "application/x-www-form-urlencoded")
                == "user=ada&password=‹redacted›")
    }

    @Test func redactionCanBeTurnedOff() {
        let url = URL(string: "https://a.example/x?token=abc")
        #expect(url.map(Redaction.none.maskedURL) == "https://a.example/x?token=abc")
    }

    @Test func failureLinesLeakNeitherQueryCredentialsNorTheBody() async throws {
        struct Leaky: ServerTask {
            let server: ConveyServer
            var path: String { "account" }
            var queryParameters: [String: String]? { ["token": "q-secret"] }
            var echoStyle: TaskEchoStyle { .consoleMinimum }
        }
        await #expect(throws: HTTPError.self) { try await Leaky(server: server(status: 503, body: "body-secret")).send() }
        let line = sink.text
        #expect(line.contains("→ 503 Service Unavailable"))
        #expect(line.contains("✗ HTTP 503 Service Unavailable"))
        #expect(!line.contains("q-secret"))
        #expect(!line.contains("body-secret"))
    }

    @Test func failedAttemptsShowTheTimeTheyTook() async throws {
        struct Slow: ServerTask {
            let server: ConveyServer
            var path: String { "slow" }
            var echoStyle: TaskEchoStyle { .consoleMinimum }
        }
        let slow = try stubServer(StubTransport { _ in
            try await Task.sleep(for: .milliseconds(50))
            throw URLError(.cannotConnectToHost)
        }) { [sink] in $0.echoSink = sink.sink }
        await #expect(throws: ConveyError.self) { try await Slow(server: slow).send() }
        #expect(!sink.text.contains(" · 0.0 ms"))
        #expect(sink.text.contains("✗ Could not connect"))
    }

    @Test func reasonPhrasesAreTheStandardOnes() {
        #expect(HTTPStatus.reasonPhrase(for: 200) == "OK")
        #expect(HTTPStatus.reasonPhrase(for: 304) == "Not Modified")
        #expect(HTTPStatus.reasonPhrase(for: 599) == "Server Error")
    }

    @Test func echoedRequestHeadersInsideJSONBodiesAreHidden() {
        let formatter = EchoFormatter(style: .consoleFull, redaction: .standard)
        let body = Data(#"{"headers": {"Authorization": "Bearer abc", "Host": "h"}}"#.utf8)
        let rendered = formatter.render(body: body, contentType: "application/json")
        #expect(!rendered.contains("Bearer abc"))
        #expect(rendered.contains(#""Host" : "h""#))
    }
}
