import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The local servers `scripts/test` starts: httpbin under gunicorn, nginx, the fault server and the event server.
enum TestServers {
    static let httpbinURL = ProcessInfo.processInfo.environment["CONVEY_HTTPBIN_URL"].flatMap(URL.init(string:))
    static let nginxURL = ProcessInfo.processInfo.environment["CONVEY_NGINX_URL"].flatMap(URL.init(string:))
    /// `scripts/fault-server.py`: one misbehaviour per route, listed at the top of the script.
    static let faultURL = ProcessInfo.processInfo.environment["CONVEY_FAULT_URL"].flatMap(URL.init(string:))
    /// scripts/event-server.py: text/event-stream routes (see its header for them).
    static let eventsURL = ProcessInfo.processInfo.environment["CONVEY_EVENTS_URL"].flatMap(URL.init(string:))
    /// scripts/ws-echo-server.py, on the websockets package: ws:// (routes in its header).
    static let webSocketURL = ProcessInfo.processInfo.environment["CONVEY_WS_URL"].flatMap(URL.init(string:))
    /// The same server over TLS (wss://), its certificate signed by the test CA in CONVEY_TLS_DIR.
    static let secureWebSocketURL = ProcessInfo.processInfo.environment["CONVEY_WSS_URL"].flatMap(URL.init(string:))
    /// scripts/ws-raw-server.py: scripted frames, and what the client did at /result/ID.
    static let rawWebSocketURL = ProcessInfo.processInfo.environment["CONVEY_WS_RAW_URL"].flatMap(URL.init(string:))

    /// Wire tests run when the servers are up; `scripts/test` sets CONVEY_REQUIRE_SERVERS so
    /// that a missing server fails the run instead of skipping tests.
    static let available = httpbinURL != nil && nginxURL != nil && faultURL != nil && eventsURL != nil
        || ProcessInfo.processInfo.environment["CONVEY_REQUIRE_SERVERS"] != nil

    static func httpbin(pathPrefix: String = "") throws -> Remote {
        let url = try #require(httpbinURL, "CONVEY_HTTPBIN_URL is not set: run the suite with scripts/test")
        return Remote(name: "httpbin", url: url, pathPrefix: pathPrefix)
    }

    static func faults() throws -> Remote {
        let url = try #require(faultURL, "CONVEY_FAULT_URL is not set: run the suite with scripts/test")
        return Remote(name: "faults", url: url)
    }

    static func events() throws -> Remote {
        let url = try #require(eventsURL, "CONVEY_EVENTS_URL is not set: run the suite with scripts/test")
        return Remote(name: "events", url: url)
    }

    static func nginx() throws -> Remote {
        let url = try #require(nginxURL, "CONVEY_NGINX_URL is not set: run the suite with scripts/test")
        return Remote(name: "nginx", url: url)
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only with the local test servers up (see `scripts/test`).
    static var wire: Self { .enabled(if: TestServers.available, "needs the local test servers: run scripts/test") }
}

/// Collects echo output for assertions.
final class EchoCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var blocks: [String] = []

    func write(_ text: String) { lock.withLock { blocks.append(text) } }

    /// The sink that writes here, for `ServerConfiguration.echoSink`.
    var sink: @Sendable (String) -> Void { { [self] text in write(text) } }

    var text: String { lock.withLock { blocks.joined(separator: "\n") } }
}

/// A thread-safe list of events, for asserting hook order and counts.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []

    func add(_ event: String) { lock.withLock { items.append(event) } }

    var events: [String] { lock.withLock { items } }
}

/// An httpbin JSON echo (`/anything`, `/get`, `/post`, `/headers`).
struct HTTPBinEcho: Decodable, Sendable {
    let args: [String: String]?
    let headers: [String: String]
    let url: String?
    let method: String?
    let json: JSONValue?
    let form: [String: String]?
    let files: [String: String]?
    let data: String?
}

/// Any JSON value, for comparing echoed bodies.
enum JSONValue: Decodable, Sendable, Equatable {
    case string(String), number(Double), bool(Bool), null
    case array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }
}

extension StubTransport {
    /// A stub answering every request with one status and body, recording what it was sent.
    static func answering(status: Int = 200, headers: [String: String] = [:], body: String = "",
                          log: EventLog? = nil, seen: RequestLog? = nil) -> StubTransport {
        StubTransport { request in
            log?.add("transport")
            seen?.add(request)
            return TransportResponse(url: request.request.url, statusCode: status,
                                         headers: headers, body: Data(body.utf8))
        }
    }
}

/// The requests a stub transport received.
final class RequestLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [TransportRequest] = []

    func add(_ request: TransportRequest) { lock.withLock { items.append(request) } }

    var requests: [TransportRequest] { lock.withLock { items } }
    var last: TransportRequest? { requests.last }
}

/// A server for stub tests, never the default.
@ConveyActor
func stubServer(_ transport: StubTransport, configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> ConveyServer {
    var configuration = ServerConfiguration(echoSink: EchoCapture().sink)
    configure(&configuration)
    let remote = try #require(Remote(name: "stub", string: "https://stub.example"))
    let server = ConveyServer(remote: remote, configuration: configuration)
    server.transport = transport
    return server
}

/// A server against the local httpbin, never the default.
@ConveyActor
func httpbinServer(pathPrefix: String = "", configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> ConveyServer {
    var configuration = ServerConfiguration(echoSink: EchoCapture().sink)
    configure(&configuration)
    return ConveyServer(remote: try TestServers.httpbin(pathPrefix: pathPrefix), configuration: configuration)
}
