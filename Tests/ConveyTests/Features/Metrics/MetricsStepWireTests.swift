import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A GET of a path, with the retries, timeout and cache use a scenario asks for.
private struct Measured: ServerTask {
    let server: ConveyServer
    let path: String
    var retries = 0
    var configuration: TaskConfiguration?
    var sessionTag: String?
    var queryParameters: [String: String]?

    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { count <= retries ? 0 : nil }
}

/// Real runs on the wire, measured by the chain's metrics step: one `http.client.request.duration`
/// per request on the wire (each retry and redirect hop), its attributes as the conventions name
/// them and nothing more, the active requests back to zero, a cache hit counted apart and never
/// as a request, on both transports.
@Suite("Metrics of real runs", .wire)
@ConveyActor
struct MetricsStepWireTests {
    private func server(_ kind: TransportKind, log: MeasurementLog, configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> ConveyServer {
        let server = try httpbinServer {
            $0.metrics = MetricsConfiguration(exporter: log)
            $0.retryWaiter = RecordingRetryWaiter()
            configure(&$0)
        }
        server.transport = kind.make()
        return server
    }

    /// The attributes of each request duration, as `status/error` for short.
    private func durations(_ log: MeasurementLog) -> [String] {
        log.named("http.client.request.duration").map { measurement in
            let status = measurement.integerAttributes["http.response.status_code"].map(String.init) ?? "-"
            return "\(status)/\(measurement.attributes["error.type"] ?? "-")"
        }
    }

    /// What every measurement of a run against httpbin must carry, and must not (a connection's
    /// have no method: many requests use one connection).
    private func expectConventional(_ log: MeasurementLog, port: Int?) {
        for measurement in log.measurements {
            let isConnection = ["http.client.open_connections", "http.client.connection.duration"].contains(measurement.name)
            #expect(measurement.attributes["http.request.method"] == (isConnection ? nil : "GET"), "\(measurement.name)")
            #expect(measurement.attributes["server.address"] == "127.0.0.1")
            #expect(measurement.integerAttributes["server.port"] == port)
            #expect(measurement.attributes["url.scheme"] == "http")
            let names = Set(measurement.attributes.keys).union(measurement.integerAttributes.keys)
            #expect(names.isSubset(of: MetricsRecorderTests.allowedAttributes[measurement.name] ?? []), "\(measurement.name): \(names)")
        }
        let active = log.named("http.client.active_requests").map(\.value).reduce(0, +)
        #expect(active == 0)
    }

    @Test(arguments: TransportKind.allCases)
    func successErrorsRetriesAndRedirects(_ kind: TransportKind) async throws {
        let log = MeasurementLog()
        let server = try server(kind, log: log)
        let port = try TestServers.httpbin().url.port

        _ = try await Measured(server: server, path: "get").download()
        #expect(durations(log) == ["200/-"])
        #expect(log.named("http.client.request.duration").first?.attributes["network.protocol.version"] == "1.1")
        #expect(log.named("http.client.response.body.size").first.map { $0.value > 0 } == true)

        await #expect(throws: HTTPError.self) { try await Measured(server: server, path: "status/404").download() }
        await #expect(throws: HTTPError.self) { try await Measured(server: server, path: "status/500").download() }
        await #expect(throws: HTTPError.self) { try await Measured(server: server, path: "status/503", retries: 1).download() }
        _ = try await Measured(server: server, path: "redirect/1").download()
        #expect(durations(log) == ["200/-", "404/404", "500/500", "503/503", "503/503", "302/-", "200/-"])
        expectConventional(log, port: port)
    }

    @Test(arguments: TransportKind.allCases)
    func aTimeoutARefusedConnectionAndACancellation(_ kind: TransportKind) async throws {
        let log = MeasurementLog()
        let server = try server(kind, log: log)
        await #expect(throws: ConveyError.self) {
            try await Measured(server: server, path: "delay/3", configuration: TaskConfiguration(timeout: .milliseconds(200))).download()
        }
        let running = Task { try await Measured(server: server, path: "delay/10").download() }
        try await waitUntil("the request is on the wire") { log.named("http.client.active_requests").count == 3 }
        running.cancel()
        await #expect(throws: ConveyError.cancelled) { try await running.value }
        #expect(durations(log) == ["-/attemptTimedOut", "-/cancelled"])

        let refused = ConveyServer(remote: Remote(name: "closed", url: try closedLoopbackURL()), configuration: {
            var configuration = ServerConfiguration(echoSink: { _ in })
            configuration.metrics = MetricsConfiguration(exporter: log)
            return configuration
        }())
        refused.transport = kind.make()
        await #expect(throws: ConveyError.self) { try await Measured(server: refused, path: "get").download() }
        #expect(durations(log) == ["-/attemptTimedOut", "-/cancelled", "-/transport"])
    }

    @Test(arguments: TransportKind.allCases)
    func aCacheHitIsCountedApartAndNeverAsARequest(_ kind: TransportKind) async throws {
        let log = MeasurementLog()
        let server = try server(kind, log: log) { $0.cache = DataCache() }
        _ = try await Measured(server: server, path: "cache/60").download()
        let hit = try await Measured(server: server, path: "cache/60").download()
        #expect(hit.isFromCache)
        #expect(durations(log) == ["200/-"])
        #expect(log.named("convey.cache.requests").map { $0.attributes["convey.cache.status"] } == ["network", "hit"])
    }

    /// In a sampled trace the duration's exemplar names the request's client span.
    @Test func aTracedRequestsDurationNamesItsClientSpan() async throws {
        let log = MeasurementLog()
        let spans = SpanCollector()
        let server = try server(.curlOrURLSession, log: log) { $0.tracing = TracingConfiguration(exporter: spans) }
        _ = try await Measured(server: server, path: "get").download()
        let duration = try #require(log.named("http.client.request.duration").first)
        let client = try #require(spans.clientSpans.first)
        #expect(duration.traceID == client.trace.hex)
        #expect(duration.spanID == TraceHex.string(client.span))
    }

    /// Many runs in flight from many tasks: every request is measured once, and none is left active.
    @Test func countsAddUpOverManyRunsInFlight() async throws {
        let log = MeasurementLog()
        let remote = try #require(Remote(name: "stub", string: "https://stub.example"))
        var configuration = ServerConfiguration(echoSink: { _ in })
        configuration.metrics = MetricsConfiguration(exporter: log)
        let server = ConveyServer(remote: remote, configuration: configuration)
        server.transport = StubTransport.answering(body: "ok")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<100 {
                group.addTask {
                    for run in 0..<100 { _ = try await Measured(server: server, path: "item/\(task)/\(run)").download() }
                }
            }
            try await group.waitForAll()
        }
        #expect(log.named("http.client.request.duration").count == 10_000)
        #expect(log.named("http.client.active_requests").map(\.value).reduce(0, +) == 0)
        #expect(log.named("http.client.active_requests").count == 20_000)
    }
}

extension TransportKind {
    /// The platform's default transport.
    static var curlOrURLSession: TransportKind {
        #if os(Linux) && canImport(CConveyCurlShim)
        .curl
        #else
        .urlSession
        #endif
    }
}
