#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A server whose token starts wrong: the refresh makes it the one `/auth/echo` takes.
private final class WebSocketTokenServer: ConveyServer {
    var token = "stale"
    var refreshes = 0

    override func headers(for task: any DownloadingTask) async throws -> Headers {
        ["Authorization": "Bearer \(token)"]
    }

    override func refreshCredentials(after error: HTTPError) async throws -> Bool {
        refreshes += 1
        token = "good"
        return true
    }
}

/// WebSocket tasks against the `websockets` package's server (scripts/ws-echo-server.py): echo up
/// to 16 MiB, compression, the handshake's fields, TLS, a proxy, authentication, pings, the close
/// handshake from both sides, and what observers, echo, tracing and HAR capture see of it.
@Suite("WebSocket echo", .wire)
@ConveyActor
struct WebSocketEchoTests {
    @Test func textAndBinaryMessagesEchoWithPermessageDeflate() async throws {
        let server = webSocketServer(try WebSocketServers.echo())
        let connection = try await TestSocket(server: server, path: "echo").connect()
        // The websockets package's defaults: 12-bit windows both ways, contexts kept.
        #expect(connection.extensions == ["permessage-deflate; server_max_window_bits=12; client_max_window_bits=12"])
        #expect(connection.handshake?.statusCode == 101)
        #expect(connection.subprotocol == nil)
        try await connection.send("hello")
        try await connection.send(Data([0, 1, 2, 255]))
        try await connection.send("κόσμε")
        var messages = connection.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("hello"))
        #expect(try await messages.next() == .binary(Data([0, 1, 2, 255])))
        #expect(try await messages.next() == .text("κόσμε"))
        try await connection.close()
        #expect(try await messages.next() == nil)
        #expect(connection.closeCode == 1000)
        await #expect(throws: ConveyError.self) { try await connection.send("after the close") }
    }

    @Test(arguments: [true, false])
    func messagesOf16MiBEchoBothWays(compressed: Bool) async throws {
        let server = webSocketServer(try WebSocketServers.echo())
        var task = TestSocket(server: server, path: "echo")
        task.offersCompression = compressed
        let connection = try await task.connect()
        #expect(connection.extensions.isEmpty == !compressed)
        // Random bytes do not compress: the frames are as large as the messages.
        let binary = randomData(count: 16 << 20)
        let text = String(repeating: "Convey 16 MiB ", count: (16 << 20) / 14) + String(repeating: "!", count: (16 << 20) % 14)
        #expect(text.utf8.count == 16 << 20)
        try await connection.send(binary)
        try await connection.send(text)
        var messages = connection.messages.makeAsyncIterator()
        #expect(try await messages.next() == .binary(binary))
        #expect(try await messages.next() == .text(text))
        try await connection.close()
    }

    @Test func theHandshakeCarriesTheTasksFieldsQueryAndSubprotocols() async throws {
        let server = webSocketServer(try WebSocketServers.echo()) { $0.defaultHeaders = ["X-Default": "server"] }
        var task = TestSocket(server: server, path: "handshake", queryParameters: ["room": "7"])
        task.extraHeaders = ["X-Convey-Test": "socket"]
        task.subprotocols = ["superchat", "chat"]
        let connection = try await task.connect()
        #expect(connection.subprotocol == "superchat")
        guard case .text(let text)? = try await nextMessage(connection) else {
            Issue.record("expected the handshake as text")
            return
        }
        let handshake = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(handshake["path"] as? String == "/handshake?room=7")
        #expect(handshake["subprotocol"] as? String == "superchat")
        let fields = try #require(handshake["headers"] as? [[String]])
        #expect(fields.contains(["X-Convey-Test", "socket"]))
        #expect(fields.contains(["X-Default", "server"]))
        #expect(fields.contains(["Sec-WebSocket-Protocol", "superchat, chat"]))
        #expect(fields.contains(["Sec-WebSocket-Version", "13"]))
        #expect(fields.contains { $0.first == "User-Agent" })
        #expect(fields.contains { $0 == ["Host", "127.0.0.1:\(TestServers.webSocketURL?.port ?? 0)"] })
        try await connection.close()
    }

    @Test func aSecureWebSocketTrustsTheTestCA() async throws {
        let transport = CurlTransport(configuration: CurlTransport.Configuration(tls: try TLSTestServers.trustingTheCA()))
        let server = webSocketServer(try WebSocketServers.secureEcho(), transport: transport)
        let connection = try await TestSocket(server: server, path: "echo").connect()
        try await connection.send("over TLS")
        #expect(try await nextMessage(connection) == .text("over TLS"))
        try await connection.close()
    }

    @Test func aHandshakeToAnHTTP2ServerGoesOutAsHTTP11() async throws {
        let transport = CurlTransport(configuration: CurlTransport.Configuration(tls: try TLSTestServers.trustingTheCA()))
        let remote = Remote(name: "nginx-tls", url: try TLSTestServers.trusted("/"))
        let server = webSocketServer(remote, transport: transport)
        do {
            _ = try await TestSocket(server: server, path: "").connect()
            Issue.record("nginx serves no WebSocket: the connect should have failed")
        } catch let error as HTTPError {
            // nginx answered the HTTP/1.1 GET as a plain request: TLS negotiated HTTP/1.1, not h2.
            #expect(error.statusCode < 500)
        }
    }

    @Test func aCertificateNobodyTrustsFailsTheHandshakeRun() async throws {
        let server = webSocketServer(try WebSocketServers.secureEcho())
        do {
            _ = try await TestSocket(server: server, path: "echo").connect()
            Issue.record("the connect should have failed")
        } catch ConveyError.transport(let failure, _, _, _) {
            #expect(failure == .secureConnectionFailed)
        }
    }

    @Test func aWebSocketGoesThroughTheHTTPProxy() async throws {
        // A user of its own: the proxy counts each user's tunnels across both transports' runs of the suite.
        let user = "websocket-task-\(UUID().uuidString.prefix(8))"
        let proxy = try TLSTestServers.proxy("CONVEY_HTTP_PROXY_URL", user: user)
        let configuration = ProxyConfiguration.http(host: proxy.host, port: proxy.port, username: proxy.username, password: proxy.password)
        let server = webSocketServer(try WebSocketServers.echo(), transport: CurlTransport(configuration: CurlTransport.Configuration(proxy: configuration)))
        let connection = try await TestSocket(server: server, path: "echo").connect()
        try await connection.send("proxied")
        #expect(try await nextMessage(connection) == .text("proxied"))
        try await connection.close()
        #expect(try await TLSTestServers.proxyCounts(user: user)["tunnels"] == 1)
    }

    @Test func a401RunsTheCredentialRefreshAndTheHandshakeGoesAgain() async throws {
        let server = WebSocketTokenServer(remote: try WebSocketServers.echo(), configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        server.transport = CurlTransport()
        let connection = try await TestSocket(server: server, path: "auth/echo").connect()
        #expect(server.refreshes == 1)
        try await connection.send("authorized")
        #expect(try await nextMessage(connection) == .text("authorized"))
        try await connection.close()
    }

    @Test func a401WithoutARefreshIsTheTasksHTTPError() async throws {
        let server = webSocketServer(try WebSocketServers.echo())
        do {
            _ = try await TestSocket(server: server, path: "auth/echo").connect()
            Issue.record("the connect should have failed")
        } catch let error as HTTPError {
            #expect(error.statusCode == 401)
            #expect(error.header("WWW-Authenticate") == "Bearer realm=\"convey\"")
            #expect(String(decoding: error.body, as: UTF8.self) == "unauthorized\n")
        }
    }

    @Test func aPingComesBackAndTheServersPingIsAnswered() async throws {
        let server = webSocketServer(try WebSocketServers.echo())
        let connection = try await TestSocket(server: server, path: "ping-client", queryParameters: ["payload": "convey"]).connect()
        var messages = connection.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("pong convey"))
        let roundTrip = try await connection.ping()
        #expect(roundTrip > .zero)
        try await connection.close()
    }

    @Test func theServerClosesWithItsCodeAndReason() async throws {
        let events = EventRecorder()
        let server = webSocketServer(try WebSocketServers.echo()) { $0.observers = [events] }
        let connection = try await TestSocket(server: server, path: "close/4001", queryParameters: ["after": "1", "reason": "bye"]).connect()
        try await connection.send("one")
        let (messages, error) = await readAll(connection)
        #expect(messages == [.text("one")])
        #expect(error == nil)
        #expect(connection.closeCode == 4001)
        #expect(connection.closeReason == "bye")
        let closed = events.onlyRun.filter { $0.hasPrefix("webSocketClosed") }
        #expect(closed == ["webSocketClosed 4001 bye by server ↑1 ↓1 ok"])
    }

    @Test func observersHearTheHandshakeThenTheConnection() async throws {
        let events = EventRecorder()
        let server = webSocketServer(try WebSocketServers.echo()) { $0.observers = [events] }
        let connection = try await TestSocket(server: server, path: "echo").connect()
        try await connection.send("hi")
        #expect(try await nextMessage(connection) == .text("hi"))
        try await connection.ping()
        try await connection.close(code: 1000, reason: "done")
        #expect(events.onlyRun == [
            "runStarted", "attemptStarted 1", "requestSent GET /echo", "responseReceived 101", "attemptFinished 1 101 ok", "runFinished 101 ok",
            "webSocketOpened - permessage-deflate; server_max_window_bits=12; client_max_window_bits=12",
            "webSocketMessage sent text 2", "webSocketMessage received text 2", "webSocketPing sent", "webSocketPong received",
            "bodyFinished 101", "webSocketClosed 1000 done by client ↑1 ↓1 ok",
        ])
    }

    @Test func messageEventsCarryContentsOnlyWhenTheEchoStylePrintsBodies() async throws {
        let events = EventRecorder()
        let echo = EchoCapture()
        let server = webSocketServer(try WebSocketServers.echo(), echo: echo) { $0.observers = [events] }
        var task = TestSocket(server: server, path: "echo")
        task.echoStyle = .consoleFull
        let connection = try await task.connect()
        try await connection.send("visible")
        #expect(try await nextMessage(connection) == .text("visible"))
        try await connection.close()
        #expect(events.onlyRun.contains("webSocketMessage sent text 7 visible"))
        #expect(events.onlyRun.contains("webSocketMessage received text 7 visible"))
        #expect(echo.text.contains("[Convey] ◀ 101 Switching Protocols"))
        #expect(echo.text.contains("[Convey] ↑ WebSocket text · 7 B\n    visible"))
        #expect(echo.text.contains("[Convey] ↓ WebSocket text · 7 B\n    visible"))
        #expect(echo.text.contains("[Convey] WebSocket closed 1000 (normal closure) by the client · ↑1 ↓1 messages"))

        let quiet = EventRecorder()
        let minimal = webSocketServer(try WebSocketServers.echo()) { $0.observers = [quiet] }
        let plain = try await TestSocket(server: minimal, path: "echo").connect()
        try await plain.send("hidden")
        _ = try await nextMessage(plain)
        try await plain.close()
        #expect(quiet.onlyRun.contains("webSocketMessage sent text 6"))
        #expect(!quiet.onlyRun.joined().contains("hidden"))
    }

    @Test func theCloseIsRecordedBesideTheHandshake() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-ws-records-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let recorder = TaskRecorder(folder: folder, bodyLimit: 10_000)
        let server = webSocketServer(try WebSocketServers.echo()) { $0.recorder = recorder }
        var task = TestSocket(server: server, path: "echo")
        task.echoStyle = .recorded
        let connection = try await task.connect()
        try await connection.close(code: 4000, reason: "bye")
        await recorder.flush()
        let records = await recorder.records()
        #expect(records.count == 2)
        #expect(records.allSatisfy { $0.statusCode == 101 && $0.url?.hasSuffix("/echo") == true })
        let close = try #require(records.first)
        #expect(close.responseBodyRecord?.text == "WebSocket closed 4000 by the client (bye) · ↑0 ↓0 messages")
    }

    @Test func theConnectionIsOneClientSpanEndingWithIt() async throws {
        let spans = SpanCollector()
        let server = webSocketServer(try WebSocketServers.echo()) { $0.tracing = TracingConfiguration(exporter: spans) }
        let connection = try await TestSocket(server: server, path: "echo").connect()
        try await connection.send("traced")
        _ = try await nextMessage(connection)
        #expect(spans.clientSpans.isEmpty)
        try await connection.close()
        let client = try #require(spans.clientSpans.first)
        #expect(spans.clientSpans.count == 1)
        #expect(client.integerAttributes["http.response.status_code"] == 101)
        #expect(!client.isError)
        #expect(spans.runSpans.count == 1)
    }

    @Test(.harValidator) func harCaptureKeepsTheMessagesAsChromeDoes() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("socket.har")
        let server = webSocketServer(try WebSocketServers.echo())
        try await HARFixtures(file: file, mode: .capture).scope {
            let connection = try await TestSocket(server: server, path: "echo").connect()
            try await connection.send("hello")
            try await connection.send(Data([1, 2, 3]))
            var messages = connection.messages.makeAsyncIterator()
            _ = try await messages.next()
            _ = try await messages.next()
            try await connection.close()
        }
        let entries = try HARText.entries(of: file)
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect((entry["response"] as? [String: Any])?["status"] as? Int == 101)
        #expect(entry["_resourceType"] as? String == "websocket")
        let messages = try #require(entry["_webSocketMessages"] as? [[String: Any]])
        // Each way in order; an echo may come back before the next send goes.
        for direction in ["send", "receive"] {
            let way = messages.filter { $0["type"] as? String == direction }
            #expect(way.map { $0["opcode"] as? Int } == [1, 2])
            #expect(way.map { $0["data"] as? String } == ["hello", "AQID"])
        }
        #expect(messages.count == 4)
        #expect(messages.allSatisfy { ($0["time"] as? Double ?? 0) > 1_700_000_000 })
        let validation = try HARValidator.validate([file])
        #expect(validation.status == 0, "\(validation.output)")
    }
}
#endif
