#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The WebSocket test servers as remotes, servers on the curl transport, and tasks for them.
enum WebSocketServers {
    /// The `websockets` package's server (ws://), its TLS twin (wss://), and the raw scripted one.
    static func echo() throws -> Remote { try remote(TestServers.webSocketURL, name: "ws") }
    static func secureEcho() throws -> Remote { try remote(TestServers.secureWebSocketURL, name: "wss") }
    static func raw() throws -> Remote { try remote(TestServers.rawWebSocketURL, name: "ws-raw") }

    /// `url` as a remote: `ws` as `http`, `wss` as `https`, as Convey's remotes take them.
    static func remote(_ url: URL?, name: String) throws -> Remote {
        let url = try #require(url, "the WebSocket test servers are not up: run the suite with scripts/test")
        let text = url.absoluteString.replacingOccurrences(of: "wss://", with: "https://").replacingOccurrences(of: "ws://", with: "http://")
        return try #require(Remote(name: name, string: text))
    }

    /// What the raw server recorded of the connection with `id` (it answers once the connection ended).
    static func rawResult(_ id: String) async throws -> [String: Any] {
        let base = try #require(TestServers.rawWebSocketURL)
        let address = try #require(URL(string: base.absoluteString.replacingOccurrences(of: "ws://", with: "http://") + "/result/\(id)"))
        let response = try await URLSessionTransport().send(address, timeout: .seconds(120))
        return try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: Any])
    }
}

/// A server on `remote` over a `CurlTransport` of its own, echo captured.
@ConveyActor
func webSocketServer(_ remote: Remote, echo: EchoCapture = EchoCapture(), transport: CurlTransport = CurlTransport(),
                     configure: (inout ServerConfiguration) -> Void = { _ in }) -> ConveyServer {
    var configuration = ServerConfiguration(echoSink: echo.sink)
    configure(&configuration)
    let server = ConveyServer(remote: remote, configuration: configuration)
    server.transport = transport
    return server
}

/// A WebSocket task whose settings a test chooses.
struct TestSocket: WebSocketTask {
    let server: ConveyServer
    var path: String
    var queryParameters: [String: String]?
    var extraHeaders = Headers()
    var subprotocols: [String] = []
    var maximumMessageSize = 16 << 20
    var offersCompression = true
    var pingInterval: Duration?
    var pongDeadline: Duration = .seconds(10)
    var reconnection: RetryPolicy?
    var echoStyle: TaskEchoStyle = .none
    var configuration: TaskConfiguration?

    init(server: ConveyServer, path: String, queryParameters: [String: String]? = nil) {
        self.server = server
        self.path = path
        self.queryParameters = queryParameters
    }

    var headers: Headers {
        get async throws {
            var headers = try await server.headers(for: self)
            headers.append(contentsOf: extraHeaders)
            return headers
        }
    }
}

/// `count` random bytes, made eight at a time.
func randomData(count: Int) -> Data {
    var random = SystemRandomNumberGenerator()
    var data = Data(count: (count + 7) / 8 * 8)
    data.withUnsafeMutableBytes { bytes in
        for offset in stride(from: 0, to: bytes.count, by: 8) {
            bytes.storeBytes(of: random.next() as UInt64, toByteOffset: offset, as: UInt64.self)
        }
    }
    return data.prefix(count)
}

/// The next message of a new loop over the connection's messages.
func nextMessage(_ connection: WebSocketConnection) async throws -> WebSocketMessage? {
    var messages = connection.messages.makeAsyncIterator()
    return try await messages.next()
}

/// An observer a test waits on: `next()` returns once one more event whose line (as
/// `EventRecorder` writes it) starts with `kind` has arrived.
final class WebSocketEventWaiter: RunObserver {
    private let kind: String
    private let state = Locked<(arrived: Int, taken: Int, waiter: CheckedContinuation<Void, Never>?)>((0, 0, nil))

    init(kind: String) {
        self.kind = kind
    }

    func observe(_ event: RunEvent) async throws {
        guard EventRecorder.line(for: event).hasPrefix(kind) else { return }
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.arrived += 1
            guard let waiter = state.waiter else { return nil }
            state.taken += 1
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    func next() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.arrived > state.taken {
                    state.taken += 1
                    return true
                }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

/// Reads messages until the connection ends, returning them and how it ended.
func readAll(_ connection: WebSocketConnection) async -> (messages: [WebSocketMessage], error: (any Error)?) {
    var messages: [WebSocketMessage] = []
    do {
        for try await message in connection.messages { messages.append(message) }
        return (messages, nil)
    } catch {
        return (messages, error)
    }
}

/// The failure kind and close code of a WebSocket error, for assertions.
func webSocketFailure(_ error: (any Error)?) -> (kind: WebSocketFailure, closeCode: Int?)? {
    guard case .webSocket(let kind, _, let code, _)? = error as? ConveyError else { return nil }
    return (kind, code)
}
#endif
