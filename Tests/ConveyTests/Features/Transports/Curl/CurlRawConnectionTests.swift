#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A WebSocket opened by hand over `CurlRawConnection`: the opening request written as bytes, the
/// answer read and checked with `WebSocketHandshake`, then frames through `WebSocketStateMachine`.
private final class HandOpenedWebSocket {
    let connection: CurlRawConnection
    let negotiation: WebSocketNegotiation
    private var machine: WebSocketStateMachine
    private var pending: [WebSocketEvent] = []
    /// How the connection failed or ended without the close handshake, once it did.
    private(set) var failure: WebSocketProtocolError?

    /// Opens `url`, or reports the status of an answer that is not 101 as `declined`.
    static func open(_ url: URL, fields: [Header] = [], tls: TLSConfiguration = TLSConfiguration(),
                     proxy: ProxyConfiguration = .direct) async throws -> Result<HandOpenedWebSocket, DeclinedStatus> {
        let handshake = try WebSocketHandshake()
        var target = url.path.isEmpty ? "/" : url.path
        if let query = url.query { target += "?" + query }
        var head = "GET \(target) HTTP/1.1\r\nHost: \(url.host ?? ""):\(url.port ?? 80)\r\n"
        for field in fields + handshake.requestFields { head += "\(field.name): \(field.value)\r\n" }
        head += "\r\n"
        let options = CurlConnectionOptions(tls: tls, proxy: proxy, systemCAFile: CurlConnectionOptions.systemCAFile)
        let connection = try await CurlRawConnection.connect(to: url, sending: Array(head.utf8), options: options, connectTimeout: .seconds(10))
        var reader = WebSocketResponseHeadReader(url: url)
        while true {
            guard let bytes = try await connection.read() else { throw URLError(.networkConnectionLost) }
            guard let (answer, rest) = try reader.read(bytes) else { continue }
            switch try handshake.check(answer) {
            case .declined(let status):
                connection.close()
                return .failure(DeclinedStatus(status: status))
            case .upgraded(let negotiation):
                let socket = HandOpenedWebSocket(connection: connection, negotiation: negotiation,
                                                 machine: try WebSocketStateMachine(deflate: negotiation.deflate))
                try await socket.take(rest)
                return .success(socket)
            }
        }
    }

    struct DeclinedStatus: Error { let status: Int }

    private init(connection: CurlRawConnection, negotiation: WebSocketNegotiation, machine: consuming WebSocketStateMachine) {
        self.connection = connection
        self.negotiation = negotiation
        self.machine = machine
    }

    deinit { connection.close() }

    func send(text: String) async throws { try await connection.write(machine.sendText(text)) }
    func send(binary: [UInt8]) async throws { try await connection.write(machine.sendBinary(binary)) }
    func close(code: WebSocketCloseCode = .normalClosure) async throws { try await connection.write(machine.close(code: code)) }
    var state: WebSocketStateMachine.State { machine.state }

    /// The next event; `nil` once the connection ended (then `failure` says how, if not cleanly).
    func next() async throws -> WebSocketEvent? {
        while pending.isEmpty {
            guard failure == nil, machine.state != .closed || machine.receivedClose == nil else { return nil }
            guard let bytes = try await connection.read() else {
                failure = machine.endOfInput()
                return nil
            }
            try await take(bytes)
        }
        return pending.removeFirst()
    }

    private func take(_ bytes: [UInt8]) async throws {
        let receipt = machine.receive(bytes)
        if !receipt.bytesToWrite.isEmpty { try await connection.write(receipt.bytesToWrite) }
        pending += receipt.events
        if let failure = receipt.failure { self.failure = failure }
    }
}

/// `CurlRawConnection` against the test servers: the `websockets` package's server (ws://, wss://
/// with the test CA, through the test proxy) and the project's scripted raw server.
@Suite("curl raw connection", .wire)
struct CurlRawConnectionTests {
    private func url(_ base: URL?, _ path: String) throws -> URL {
        let base = try #require(base, "the WebSocket test servers are not up: run the suite with scripts/test")
        return try #require(URL(string: base.absoluteString + path))
    }

    private func open(_ url: URL, fields: [Header] = [], tls: TLSConfiguration = TLSConfiguration(),
                      proxy: ProxyConfiguration = .direct) async throws -> HandOpenedWebSocket {
        try await HandOpenedWebSocket.open(url, fields: fields, tls: tls, proxy: proxy).get()
    }

    /// Sends a few messages and checks their echoes, then closes from the client's side.
    private func expectEchoes(_ socket: HandOpenedWebSocket) async throws {
        try await socket.send(text: "hello")
        #expect(try await socket.next() == .text("hello"))
        try await socket.send(binary: [0, 1, 2, 255])
        #expect(try await socket.next() == .binary([0, 1, 2, 255]))
        try await socket.close()
        #expect(try await socket.next() == .close(code: .normalClosure, reason: ""))
        #expect(try await socket.next() == nil)
        #expect(socket.failure == nil)
    }

    @Test func echoesOverPlainWebSocketWithPermessageDeflate() async throws {
        let socket = try await open(try url(TestServers.webSocketURL, "/echo"))
        // The websockets package's defaults: 12-bit windows both ways, contexts kept.
        #expect(socket.negotiation.extensions == ["permessage-deflate; server_max_window_bits=12; client_max_window_bits=12"])
        #expect(socket.negotiation.deflate == PerMessageDeflateParameters(serverMaxWindowBits: 12, clientMaxWindowBits: 12))
        try await expectEchoes(socket)
    }

    @Test func largeMessagesCrossTheSocketInBothDirections() async throws {
        let socket = try await open(try url(TestServers.webSocketURL, "/echo"))
        // 4 MiB that do not compress: many sends and reads, writes waiting for the socket.
        var random = SystemRandomNumberGenerator()
        let message = (0..<(4 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
        try await socket.send(binary: message)
        #expect(try await socket.next() == .binary(message))
        try await socket.close()
        #expect(try await socket.next() == .close(code: .normalClosure, reason: ""))
    }

    @Test func theHandshakeCarriesTheRequestsFields() async throws {
        let socket = try await open(try url(TestServers.webSocketURL, "/handshake?room=7"), fields: [Header(name: "X-Convey-Test", value: "raw")])
        guard case .text(let text) = try await socket.next() else {
            Issue.record("expected the handshake as text")
            return
        }
        let handshake = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(handshake["path"] as? String == "/handshake?room=7")
        let fields = try #require(handshake["headers"] as? [[String]])
        #expect(fields.contains(["X-Convey-Test", "raw"]))
        #expect(fields.contains(["Sec-WebSocket-Version", "13"]))
        try await socket.close()
    }

    @Test func a401IsDeclinedAndTheRightCredentialUpgrades() async throws {
        let address = try url(TestServers.webSocketURL, "/auth/echo")
        let refused = try await HandOpenedWebSocket.open(address)
        guard case .failure(let declined) = refused else {
            Issue.record("expected a 401")
            return
        }
        #expect(declined.status == 401)
        let socket = try await open(address, fields: [Header(name: "Authorization", value: "Bearer good")])
        try await expectEchoes(socket)
    }

    @Test func theServerClosesWithItsCodeAndTheClientEchoesIt() async throws {
        let socket = try await open(try url(TestServers.webSocketURL, "/close/4001?reason=bye"))
        #expect(try await socket.next() == .close(code: WebSocketCloseCode(rawValue: 4001), reason: "bye"))
        #expect(try await socket.next() == nil)
        #expect(socket.failure == nil)
        #expect(socket.state == .closed)
    }

    @Test func echoesOverTLSWithTheTestCA() async throws {
        let socket = try await open(try url(TestServers.secureWebSocketURL, "/echo"), tls: try TLSTestServers.trustingTheCA())
        try await expectEchoes(socket)
    }

    @Test func aCertificateNobodyTrustsFailsTheConnect() async throws {
        do {
            _ = try await open(try url(TestServers.secureWebSocketURL, "/echo"))
            Issue.record("the connect should have failed")
        } catch let error as URLError {
            #expect(error.code == .serverCertificateUntrusted)
        }
    }

    @Test func echoesThroughTheHTTPProxy() async throws {
        // A user of its own: the proxy counts each user's tunnels across both transports' runs of the suite.
        let user = "raw-websocket-\(UUID().uuidString.prefix(8))"
        let proxy = try TLSTestServers.proxy("CONVEY_HTTP_PROXY_URL", user: user)
        let configuration = ProxyConfiguration.http(host: proxy.host, port: proxy.port, username: proxy.username, password: proxy.password)
        let socket = try await open(try url(TestServers.webSocketURL, "/echo"), proxy: configuration)
        try await expectEchoes(socket)
        #expect(try await TLSTestServers.proxyCounts(user: user)["tunnels"] == 1)
    }

    @Test func oneHundredThousandMessagesArriveInOrderAndTheClientsFramesAreMasked() async throws {
        let id = UUID().uuidString
        let socket = try await open(try url(TestServers.rawWebSocketURL, "/many?count=100000&id=\(id)"))
        var next = 0
        while let event = try await socket.next() {
            if case .text(let text) = event {
                if text != String(next) { Issue.record("message \(next) was \(text)") }
                next += 1
            }
        }
        #expect(next == 100_000)
        #expect(socket.failure == nil)
        let result = try await rawResult(id)
        #expect(result["masked"] as? Bool == true)
        #expect((result["close"] as? [String: Any])?["code"] as? Int == 1000)
    }

    @Test func aServerVanishingMidFrameEndsTheReadsWith1006() async throws {
        let socket = try await open(try url(TestServers.rawWebSocketURL, "/vanish-mid-frame"))
        #expect(try await socket.next() == nil)
        #expect(socket.failure == .connectionEnded(midFrame: true))
    }

    @Test func aProtocolViolationIsAnsweredWithItsCloseCodeOnTheWire() async throws {
        let id = UUID().uuidString
        let socket = try await open(try url(TestServers.rawWebSocketURL, "/bad-utf8?id=\(id)"))
        #expect(try await socket.next() == nil)
        #expect(socket.failure == .invalidUTF8InText(byteOffset: 3))  // 0xED then 0xA0: a surrogate, bad at its second byte
        socket.connection.close()
        #expect((try await rawResult(id)["close"] as? [String: Any])?["code"] as? Int == 1007)
    }

    @Test func cancellingAWaitingReadClosesTheConnection() async throws {
        let id = UUID().uuidString
        let socket = try await open(try url(TestServers.rawWebSocketURL, "/no-pong?id=\(id)"))
        let connection = socket.connection
        let reading = Task { try await connection.read() }
        reading.cancel()
        await #expect(throws: URLError.self) { try await reading.value }
        // The server saw the connection end without a close frame.
        let result = try await rawResult(id)
        #expect(result["ended"] as? String == "eof")
        #expect(result["close"] is NSNull)
    }

    @Test func aRefusedConnectFailsAsCannotConnect() async throws {
        let closedPort = try #require(URL(string: "ws://127.0.0.1:9/echo"))
        do {
            _ = try await open(closedPort)
            Issue.record("the connect should have failed")
        } catch let error as URLError {
            #expect(error.code == .cannotConnectToHost)
        }
    }

    /// What the raw server recorded of the connection with `id` (it waits for the connection to end).
    private func rawResult(_ id: String) async throws -> [String: Any] {
        let base = try #require(TestServers.rawWebSocketURL)
        let address = try #require(URL(string: base.absoluteString.replacingOccurrences(of: "ws://", with: "http://") + "/result/\(id)"))
        // The server answers once the connection ended, which a loaded machine may make slow.
        let response = try await URLSessionTransport().send(address, timeout: .seconds(120))
        return try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: Any])
    }
}
#endif
