import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A server adding its own headers, some clashing with the defaults.
final class HeaderServer: ConveyServer {
    override func headers(for task: any DownloadingTask) async throws -> Headers {
        ["x-client": "server", "Accept": "application/json"]
    }
}

struct HeaderTask: ServerTask {
    let server: ConveyServer
    var path: String { "headers" }
    var headers: Headers {
        get async throws {
            var headers = try await server.headers(for: self)
            headers.append(Header(name: "X-CLIENT", value: "task"))
            headers.append(Header(name: "x-task-only", value: "1"))
            return headers
        }
    }
}

@Suite("Headers")
struct HeadersTests {
    @Test func appendingAnExistingNameReplacesItsValueCaseInsensitively() {
        var headers: Headers = ["Content-Type": "text/plain"]
        headers.append(Header(name: "content-type", value: "application/json"))
        #expect(headers.count == 1)
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(Array(headers).map(\.name) == ["content-type"])
    }

    @Test func subscriptSetsAndRemoves() {
        var headers = Headers()
        headers["X-A"] = "1"
        headers["x-b"] = "2"
        headers["X-a"] = nil
        #expect(Array(headers) == [Header(name: "x-b", value: "2")])
        #expect(headers.description == "x-b: 2")
    }

    @Test func addKeepsRepeatedFieldsInOrderAndTheDictionaryJoinsThem() {
        var headers: Headers = ["Accept": "application/json"]
        headers.add(Header(name: "X-Tag", value: "a"))
        headers.add(Header(name: "Accept-Language", value: "en"))
        headers.add(Header(name: "x-tag", value: "b"))
        #expect(Array(headers).map(\.description) == ["Accept: application/json", "X-Tag: a", "x-tag: b", "Accept-Language: en"])
        #expect(headers.values(named: "X-TAG") == ["a", "b"])
        #expect(headers["x-tag"] == "a, b")
        #expect(headers.combined == ["Accept": "application/json", "X-Tag": "a, b", "Accept-Language": "en"])
    }

    @Test func cookieFieldsAreJoinedWithSemicolons() {
        var headers = Headers()
        headers.add(Header(name: "Cookie", value: "a=1"))
        headers.add(Header(name: "Cookie", value: "b=2"))
        #expect(headers.combined == ["Cookie": "a=1; b=2"])
    }

    @Test func settingANameReplacesEveryRepeatOfIt() {
        var headers = Headers()
        headers.add(Header(name: "X-Tag", value: "a"))
        headers.add(Header(name: "X-Tag", value: "b"))
        headers.append(Header(name: "Other", value: "1"))
        headers["x-tag"] = "c"
        #expect(Array(headers) == [Header(name: "x-tag", value: "c"), Header(name: "Other", value: "1")])
    }

    @Test func aLayerReplacesEarlierLayersButKeepsItsOwnRepeats() {
        var layered: Headers = ["X-Tag": "server", "Accept": "*/*"]
        var task = Headers()
        task.add(Header(name: "X-Tag", value: "a"))
        task.add(Header(name: "X-Tag", value: "b"))
        layered.append(contentsOf: task)
        #expect(layered.values(named: "X-Tag") == ["a", "b"])
        #expect(layered["Accept"] == "*/*")
    }

    @Test func theSeedLiteralAndAppendAndSequencesOfFieldsStillReplaceSameNamedFields() {
        var headers: Headers = ["Accept": "application/json", "accept": "text/plain"]
        #expect(Array(headers) == [Header(name: "accept", value: "text/plain")])
        headers.append(Header(name: "ACCEPT", value: "*/*"))
        #expect(Array(headers) == [Header(name: "ACCEPT", value: "*/*")])
        let fromFields = Headers([Header(name: "X-Tag", value: "a"), Header(name: "Other", value: "1"), Header(name: "x-tag", value: "b")])
        #expect(Array(fromFields) == [Header(name: "x-tag", value: "b"), Header(name: "Other", value: "1")])
    }

    @Test func responseLinesKeepEveryRepeatInTheOrderReceived() {
        let lines = [Header(name: "Set-Cookie", value: "a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT"), Header(name: "Age", value: "7200"),
                     Header(name: "set-cookie", value: "b=2"), Header(name: "Age", value: "0")]
        let fields = Headers(lines: lines)
        #expect(Array(fields) == lines)
        #expect(fields.count == 4)
        #expect(fields[2] == Header(name: "set-cookie", value: "b=2"))
        #expect(fields.first(named: "AGE") == "7200")
        #expect(fields.contains(named: "SET-COOKIE"))
        #expect(!fields.contains(named: "Cookie"))
        #expect(fields.values(named: "Set-Cookie") == ["a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT", "b=2"])
        #expect(fields["age"] == "7200, 0")
        #expect(fields.combined == ["Set-Cookie": "a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT, b=2", "Age": "7200, 0"])
    }

    @Test func aFoldedLineContinuesTheLastFieldAndNothingElse() {
        var fields = Headers()
        fields.continueLastField(with: "ignored")
        #expect(fields.isEmpty)
        fields.appendLine(Header(name: "X-Long", value: "first"))
        fields.appendLine(Header(name: "x-long", value: "second"))
        fields.continueLastField(with: "part")
        #expect(fields.values(named: "X-Long") == ["first", "second part"])
    }

    @Test func dictionaryHeadersAreSortedByName() {
        #expect(Array(Headers(["b": "2", "a": "1"])).map(\.name) == ["a", "b"])
    }

    @Test @ConveyActor func taskHeadersReplaceServerAndDefaultHeadersAndNothingIsSentTwice() async throws {
        let seen = RequestLog()
        let remote = try #require(Remote(name: "s", string: "https://stub.example"))
        let server = HeaderServer(remote: remote,
                                  configuration: ServerConfiguration(defaultHeaders: ["X-Client": "default", "X-Default-Only": "d", "accept": "*/*"],
                                                                     echoSink: EchoCapture().sink))
        server.transport = StubTransport.answering(seen: seen)
        try await HeaderTask(server: server).send()
        let request = try #require(seen.last?.request)
        let fields = request.allHTTPHeaderFields
        #expect(fields.keys.filter { $0.lowercased() == "x-client" }.count == 1)
        #expect(fields.keys.filter { $0.lowercased() == "accept" }.count == 1)
        #expect(request.value(forHTTPHeaderField: "X-Client") == "task")
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(request.value(forHTTPHeaderField: "X-Default-Only") == "d")
        #expect(request.value(forHTTPHeaderField: "X-Task-Only") == "1")
    }

    @Test(.wire) @ConveyActor func precedenceHoldsOnTheWire() async throws {
        let server = HeaderServer(remote: try TestServers.httpbin(),
                                  configuration: ServerConfiguration(defaultHeaders: ["X-Client": "default"], echoSink: EchoCapture().sink))
        let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: try await HeaderTask(server: server).download().data)
        #expect(echo.headers["X-Client"] == "task")
        #expect(echo.headers["Accept"] == "application/json")
    }

    @Test(.wire) @ConveyActor func defaultUserAgentNamesTheAppAndConveyNotLibcurl() async throws {
        let server = try httpbinServer()
        let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: try await HeaderTask(server: server).download().data)
        let agent = try #require(echo.headers["User-Agent"])
        #expect(agent.contains("Convey/\(conveyVersion)"))
        #expect(agent.hasPrefix(ProcessInfo.processInfo.processName))
        #expect(!agent.contains("curl"))
    }

    @Test(.wire) @ConveyActor func configuredUserAgentIsSentAsIs() async throws {
        let server = try httpbinServer { $0.userAgent = "MyApp/2.0" }
        let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: try await HeaderTask(server: server).download().data)
        #expect(echo.headers["User-Agent"] == "MyApp/2.0")
    }
}
