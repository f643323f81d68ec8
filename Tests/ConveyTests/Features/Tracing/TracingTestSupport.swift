import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@_spi(Transport) @testable import Convey

/// The tracing suites' servers: `scripts/traced-server.py` (OpenTelemetry's Python SDK extracting
/// each request's context) and `scripts/otlp-collector.py` (an OTLP/HTTP JSON receiver checking
/// each batch with opentelemetry-proto's messages), both started by `scripts/with-test-servers`.
enum TracingServers {
    static let tracedURL = ProcessInfo.processInfo.environment["CONVEY_TRACED_URL"].flatMap(URL.init(string:))
    static let collectorURL = ProcessInfo.processInfo.environment["CONVEY_COLLECTOR_URL"].flatMap(URL.init(string:))

    /// The traced server as a remote.
    static func traced() throws -> Remote {
        Remote(name: "traced", url: try #require(tracedURL, "CONVEY_TRACED_URL is not set: run the suite with scripts/test"))
    }

    /// The traced server under another origin: `localhost` instead of `127.0.0.1`, same port.
    static func tracedOtherOrigin() throws -> URL {
        let url = try #require(tracedURL, "CONVEY_TRACED_URL is not set: run the suite with scripts/test")
        var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.host = "localhost"
        return try #require(components.url)
    }

    /// What the traced server saw of the requests under `key`, in order.
    static func log(_ key: String) async throws -> [ServerSideContext] {
        let url = try #require(tracedURL).appending(path: "log/\(key)")
        let (data, _) = try await URLSession.shared.data(from: url)
        return try JSONDecoder().decode([ServerSideContext].self, from: data)
    }

    /// The collector's base URL for `behaviour` (`ok`, `throttle`, `unavailable`, `slow`, `hang`, `count`) and `key`.
    static func collector(_ behaviour: String, key: String) throws -> URL {
        try #require(collectorURL, "CONVEY_COLLECTOR_URL is not set: run the suite with scripts/test").appending(path: "\(behaviour)/\(key)")
    }

    /// What the collector received under `key`.
    static func received(_ key: String) async throws -> CollectorRecord {
        let url = try #require(collectorURL).appending(path: "batches/\(key)")
        let (data, _) = try await URLSession.shared.data(from: url)
        return try JSONDecoder().decode(CollectorRecord.self, from: data)
    }
}

/// One request as the OpenTelemetry-instrumented server saw it.
struct ServerSideContext: Decodable, Sendable {
    let path: String
    let traceparent: String?
    let tracestate: String?
    /// The context its W3C propagator extracted.
    let remote_trace_id: String?
    let remote_span_id: String?
    let remote_sampled: Bool?
    let remote_trace_state: String?
    /// The server span it started in that context.
    let trace_id: String
    let parent_span_id: String?
    let recording: Bool
}

/// What the collector stand-in received under one key.
struct CollectorRecord: Decodable, Sendable {
    let requests: Int
    let batches: [String]
    let errors: [String]
    let spans: [CollectedSpan]
    /// Each metrics batch's data points, as opentelemetry-proto parsed them.
    let metrics: [CollectedMetricPoint]
}

/// A span as opentelemetry-proto parsed it.
struct CollectedSpan: Decodable, Sendable {
    let traceId: String
    let spanId: String
    let parentSpanId: String
    let traceState: String
    let name: String
    let kind: Int
    let attributes: [String: JSONValue]
    let events: [Event]
    let status: Int
    let statusMessage: String
    let scope: String
    let service: String?

    struct Event: Decodable, Sendable {
        let name: String
    }
}

/// Keeps every span exported to it, for assertions.
final class SpanCollector: SpanExporter {
    private let collected = Locked<[TraceSpan]>([])

    func export(_ spans: [TraceSpan]) {
        collected.withLock { $0 += spans }
    }

    var spans: [TraceSpan] { collected.value }
    var clientSpans: [TraceSpan] { spans.filter(\.isClient) }
    var runSpans: [TraceSpan] { spans.filter { !$0.isClient } }
}

/// A GET of a path on a traced server.
struct TracedGet: ServerTask {
    let server: ConveyServer
    let path: String
    var queryParameters: [String: String]? = nil
    var cacheStrategy: CacheStrategy = .localFirst
    var configuration: TaskConfiguration? = nil
    var extraHeaders: Headers = []

    var headers: Headers {
        get async throws {
            var headers = try await server.headers(for: self)
            headers.append(contentsOf: extraHeaders)
            return headers
        }
    }
}

/// A server on the traced server with tracing on, spans to `exporter`.
@ConveyActor
func tracedServer(exporter: (any SpanExporter)?, configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> ConveyServer {
    var configuration = ServerConfiguration(echoSink: EchoCapture().sink)
    configuration.tracing = TracingConfiguration(exporter: exporter)
    configure(&configuration)
    return ConveyServer(remote: try TracingServers.traced(), configuration: configuration)
}

/// A loopback port nothing listens on (bound for a moment, then closed): connections to it are refused at once.
func closedLoopbackURL() throws -> URL {
    #if canImport(Glibc)
    let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let descriptor = Darwin.socket(AF_INET, SOCK_STREAM, 0)
    #endif
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    try #require(bound)
    return try #require(URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"))
}
