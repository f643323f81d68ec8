import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Profile: ServerTask {
    let server: ConveyServer
    var path: String { "profile" }
    var queryItems: [URLQueryItem] { [URLQueryItem(name: "page", value: "2"), URLQueryItem(name: "token", value: "query-t0ken")] }
    var headers: Headers {
        get async throws {
            var headers: Headers = ["X-Trace": "first", "Authorization": "Bearer header-t0ken", "Cookie": "session=c00kie-value; theme=dark"]
            headers.add(Header(name: "X-Trace", value: "second"))
            return headers
        }
    }
}

/// Sends whatever reaches the wire as given: an exchange step puts user info in the URL and a
/// proxy credential in the fields, which the pipeline itself never sends.
private struct RawCapture: ServerTask {
    let server: ConveyServer
    let url: URL
    var path: String { "raw" }
    var exchangeInterceptors: [any Interceptor] { [RawRequest(url: url)] }

    struct RawRequest: Interceptor {
        let url: URL
        func intercept(_ request: OutgoingRequest,
                       next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
            try await next(OutgoingRequest(url: url, fields: ["Proxy-Authorization": "Basic cHJveHktc2VjcmV0"]))
        }
    }
}

private struct SignIn: JSONUploadingTask {
    struct Body: Encodable, Sendable {
        let user: String
        let password: String
    }
    let server: ConveyServer
    var path: String { "sign-in" }
    var method: HTTPMethod { .post }
    var uploadPayload: Body? { Body(user: "ada", password: "pa55word-secret") }
}

private struct Flaky: ServerTask {
    let server: ConveyServer
    var path: String { "flaky" }
    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { count < 2 ? 0 : nil }
}

/// Every secret the tasks above send or receive.
private let secrets = ["query-t0ken", "header-t0ken", "c00kie-value", "pa55word-secret", "response-t0ken", "set-c00kie"]

@Suite("HAR export")
@ConveyActor
struct HARExportTests {
    @Test func recordsExportOldestFirstWithTheirFieldsInOrderAndConveysOwnFields() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let recorder = TaskRecorder(folder: scratch.file("records"), bodyLimit: 10_000)
        let (server, _) = try await makeServer { $0.recorder = recorder }

        try await Profile(server: server).send()
        try await SignIn(server: server).send()
        try await Flaky(server: server).send()
        let file = scratch.file("out/records.har")
        let written = try await recorder.exportHAR(to: file)

        let entries = try HARText.entries(of: file)
        #expect(written == 4)
        #expect(entries.count == 4)
        let profile = try #require(entries.first)
        let request = try #require(profile["request"] as? [String: Any])
        #expect(request["url"] as? String == "https://stub.example/profile?page=2&token=‹redacted›")
        let headers = try #require(request["headers"] as? [[String: String]])
        #expect(headers.filter { $0["name"] == "X-Trace" }.map { $0["value"] } == ["first", "second"])
        #expect(headers.first { $0["name"] == "Authorization" }?["value"] == "‹redacted›")
        #expect(request["queryString"] as? [[String: String]] == [["name": "page", "value": "2"], ["name": "token", "value": "‹redacted›"]])
        let convey = try #require(profile["_convey"] as? [String: Any])
        #expect(convey["taskType"] as? String == "Profile")
        #expect(convey["attempt"] as? Int == 1)
        #expect(convey["cacheStatus"] as? String == "network")
        let content = try #require((profile["response"] as? [String: Any])?["content"] as? [String: Any])
        #expect(content["encoding"] as? String == "base64")
        #expect(content["text"] as? String == Data([0x00, 0x01, 0xFE, 0xFF]).base64EncodedString())
        let timings = try #require(profile["timings"] as? [String: Double])
        #expect(timings["dns"] == -1 && timings["send"] == -1 && timings["wait"] == -1)

        let signIn = try #require(entries.dropFirst().first?["request"] as? [String: Any])
        let postData = try #require(signIn["postData"] as? [String: Any])
        #expect(postData["mimeType"] as? String == "application/json")
        #expect((postData["text"] as? String)?.contains("‹redacted›") == true)
        // A record keeps Set-Cookie masked whole: no cookie's name is left to list.
        let cookies = try #require((entries.dropFirst().first?["response"] as? [String: Any])?["cookies"] as? [[String: Any]])
        #expect(cookies.isEmpty)

        let attempts = entries.suffix(2).compactMap { ($0["_convey"] as? [String: Any])?["attempt"] as? Int }
        let statuses = entries.suffix(2).compactMap { ($0["response"] as? [String: Any])?["status"] as? Int }
        #expect(attempts == [1, 2])
        #expect(statuses == [503, 200])
    }

    @Test func anExportOfRecordsHoldsNoSecretWithOrWithoutTheOption() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let masked = TaskRecorder(folder: scratch.file("masked"), bodyLimit: 10_000)
        let (server, _) = try await makeServer { $0.recorder = masked }
        try await Profile(server: server).send()
        try await SignIn(server: server).send()

        try await masked.exportHAR(to: scratch.file("plain.har"))
        try await masked.exportHAR(to: scratch.file("kept.har"), includingSecrets: true)

        for name in ["plain.har", "kept.har"] {
            let text = try String(contentsOf: scratch.file(name), encoding: .utf8)
            for secret in secrets { #expect(!text.contains(secret), "\(name) holds \(secret)") }
        }
        let kept = try String(contentsOf: scratch.file("kept.har"), encoding: .utf8)
        #expect(kept.contains("This file holds credentials"))
        #expect(kept.contains("Values the recording server masked stay masked"))
    }

    @Test func recordsWrittenUnmaskedAreMaskedOnExportUnlessSecretsAreKept() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let unmasked = TaskRecorder(folder: scratch.file("unmasked"), bodyLimit: 10_000)
        let (server, _) = try await makeServer {
            $0.recorder = unmasked
            $0.redaction = .none
        }
        try await Profile(server: server).send()
        try await SignIn(server: server).send()

        try await unmasked.exportHAR(to: scratch.file("plain.har"))
        try await unmasked.exportHAR(to: scratch.file("kept.har"), includingSecrets: true)

        let plain = try String(contentsOf: scratch.file("plain.har"), encoding: .utf8)
        let kept = try String(contentsOf: scratch.file("kept.har"), encoding: .utf8)
        for secret in secrets {
            #expect(!plain.contains(secret), "the masked export holds \(secret)")
            #expect(kept.contains(secret), "the export with secrets lacks \(secret)")
        }
        #expect(!plain.contains("This file holds credentials"))
    }

    @Test func aLiveCaptureMasksEverySecretUnlessAskedToKeepThem() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let (server, _) = try await makeServer()
        let userInfo = "https://ada:userinfo-pa55@stub.example/raw?api_key=raw-k3y"
        for (name, keeps) in [("plain.har", false), ("kept.har", true)] {
            let fixtures = try HARFixtures(file: scratch.file(name), mode: .capture, includingSecrets: keeps)
            let raw = try #require(URL(string: userInfo))
            try await fixtures.scope {
                try await Profile(server: server).send()
                try await SignIn(server: server).send()
                try await RawCapture(server: server, url: raw).send()
            }
        }

        let plain = try String(contentsOf: scratch.file("plain.har"), encoding: .utf8)
        let kept = try String(contentsOf: scratch.file("kept.har"), encoding: .utf8)
        let live = secrets + ["userinfo-pa55", "raw-k3y", "cHJveHktc2VjcmV0"]
        for secret in live {
            #expect(!plain.contains(secret), "the masked capture holds \(secret)")
            #expect(kept.contains(secret), "the capture with secrets lacks \(secret)")
        }
        #expect(plain.contains("https://‹redacted›@stub.example/raw?api_key=‹redacted›"))
        #expect(kept.contains(HARPrivacy.secretsKeptComment))
        #expect(!plain.contains("This file holds credentials"))
        let entries = try HARText.entries(of: scratch.file("plain.har"))
        #expect(entries.compactMap { ($0["_convey"] as? [String: Any])?["taskType"] as? String } == ["Profile", "SignIn", "RawCapture"])
        let sent = try #require((entries.first?["request"] as? [String: Any])?["cookies"] as? [[String: Any]])
        #expect(sent.map { $0["name"] as? String } == ["session", "theme"])
        #expect(sent.map { $0["value"] as? String } == ["‹redacted›", "‹redacted›"])
        let set = try #require((entries.dropFirst().first?["response"] as? [String: Any])?["cookies"] as? [[String: Any]])
        #expect(set.map { $0["name"] as? String } == ["session", "theme"])
        #expect(set.first?["httpOnly"] as? Bool == true && set.first?["secure"] as? Bool == true && set.first?["path"] as? String == "/")
        #expect(set.allSatisfy { $0["value"] as? String == "‹redacted›" })
    }

    @Test(.harValidator) func everyKindOfExportPassesTheHARSchema() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let recorder = TaskRecorder(folder: scratch.file("records"), bodyLimit: 10_000)
        let (server, _) = try await makeServer { $0.recorder = recorder }
        let capture = try HARFixtures(file: scratch.file("capture.har"), mode: .capture)
        try await capture.scope {
            try await Profile(server: server).send()
            try await SignIn(server: server).send()
            try await Flaky(server: server).send()
        }
        try await recorder.exportHAR(to: scratch.file("records.har"))
        try await recorder.exportHAR(to: scratch.file("secrets.har"), includingSecrets: true)
        try await TaskRecorder(folder: scratch.file("none")).exportHAR(to: scratch.file("empty.har"))

        let result = try HARValidator.validate(["capture.har", "records.har", "secrets.har", "empty.har"].map(scratch.file))
        try? FileManager.default.removeItem(atPath: "/tmp/peek"); try FileManager.default.copyItem(at: scratch.url, to: URL(filePath: "/tmp/peek"))

        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("capture.har: valid HAR 1.2, 4 entries"))
        #expect(result.output.contains("records.har: valid HAR 1.2, 4 entries"))
        #expect(result.output.contains("empty.har: valid HAR 1.2, 0 entries"))
    }

    @Test func anExportReplacesTheFileOnlyWhenCompleteAndOwnerOnly() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let recorder = TaskRecorder(folder: scratch.file("records"))
        let (server, _) = try await makeServer { $0.recorder = recorder }
        try await Profile(server: server).send()
        let target = scratch.file("target.txt")
        try Data("not to be touched".utf8).write(to: target)
        let link = scratch.file("link.har")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)

        try await recorder.exportHAR(to: link)

        #expect(try String(contentsOf: target, encoding: .utf8) == "not to be touched")
        let attributes = try FileManager.default.attributesOfItem(atPath: link.path(percentEncoded: false))
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try HARText.entries(of: link).count == 1)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path(percentEncoded: false)).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }

    private func makeServer(configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> (ConveyServer, RequestLog) {
        let seen = RequestLog()
        let server = try stubServer(scripted(seen), configure: configure)
        return (server, seen)
    }
}

/// Answers `/flaky` with 503 the first time, then 200; `/sign-in` with a token and two cookies; anything else with four bytes.
private func scripted(_ seen: RequestLog) -> StubTransport {
    StubTransport { request in
        seen.add(request)
        let url = request.request.url
        switch url.path {
        case "/flaky":
            let status = seen.requests.filter { $0.request.url.path == "/flaky" }.count == 1 ? 503 : 200
            return TransportResponse(url: url, statusCode: status, headers: ["Content-Type": "text/plain"], body: Data("flaky \(status)".utf8))
        case "/sign-in":
            var headers = Headers()
            headers.add(Header(name: "Content-Type", value: "application/json"))
            headers.add(Header(name: "Set-Cookie", value: "session=set-c00kie; Path=/; HttpOnly; Secure"))
            headers.add(Header(name: "Set-Cookie", value: "theme=dark; Path=/"))
            return TransportResponse(url: url, statusCode: 200, headers: headers,
                                     body: Data(#"{"access_token": "response-t0ken", "user": "ada"}"#.utf8))
        default:
            return TransportResponse(url: url, statusCode: 200, headers: ["Content-Type": "application/octet-stream"],
                                     body: Data([0x00, 0x01, 0xFE, 0xFF]))
        }
    }
}
