#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Convey

/// A GET of a path, with a query no connection's attributes may show.
private struct Fetched: ServerTask {
    let server: ConveyServer
    let path: String
    var queryParameters: [String: String]? = ["secret": "QUERY"]
}

/// `http.client.open_connections` and `http.client.connection.duration` from `CurlTransport`'s
/// connections to the local servers: counted once per connection however many requests reuse it,
/// active while a request uses it and idle in the pool, closed (with a duration) when the pool
/// closes it, when the server did, or when the transport goes away.
@Suite("Connection metrics from curl", .wire)
@ConveyActor
struct ConnectionMetricsWireTests {
    /// The sum of `http.client.open_connections` by `http.connection.state`.
    private func open(_ log: MeasurementLog) -> (active: Double, idle: Double) {
        let measurements = log.named("http.client.open_connections")
        let active = measurements.filter { $0.attributes["http.connection.state"] == "active" }.map(\.value).reduce(0, +)
        let idle = measurements.filter { $0.attributes["http.connection.state"] == "idle" }.map(\.value).reduce(0, +)
        return (active, idle)
    }

    private func durations(_ log: MeasurementLog) -> [MetricMeasurement] {
        log.named("http.client.connection.duration")
    }

    /// A transport request to `url` whose connections are reported to `log`.
    private func request(_ url: URL, reportingTo log: MeasurementLog) -> TransportRequest {
        var request = TransportRequest(request: OutgoingRequest(url: url), timeout: .seconds(20))
        request.connectionObserver = MetricsConnectionObserver(recorder: MetricsRecorder(exporter: log))
        return request
    }

    @Test func sequentialRequestsReuseOneConnectionCountedOnceWithItsAttributes() async throws {
        let log = MeasurementLog()
        let remote = try TestServers.nginx()
        var configuration = ServerConfiguration(echoSink: { _ in })
        configuration.metrics = MetricsConfiguration(exporter: log)
        let server = ConveyServer(remote: remote, configuration: configuration)
        let transport = CurlTransport()
        server.transport = transport

        for _ in 0..<5 { _ = try await Fetched(server: server, path: "hello.txt").download() }
        try await waitUntil("the connection is idle") { open(log) == (active: 0, idle: 1) }

        let measurements = log.named("http.client.open_connections")
        // Opened active, then five times active to idle (idle to active on each reuse): 1 + 5 × 2 + 4 × 2.
        #expect(measurements.count == 19)
        #expect(measurements.filter { $0.value == 1 && $0.attributes["http.connection.state"] == "active" }.count == 5)
        #expect(durations(log).isEmpty)
        for measurement in measurements {
            #expect(measurement.attributes["server.address"] == "127.0.0.1")
            #expect(measurement.integerAttributes["server.port"] == remote.url.port)
            #expect(measurement.attributes["url.scheme"] == "http")
            #expect(measurement.attributes["network.protocol.version"] == "1.1")
            #expect(Set(measurement.attributes.keys).union(measurement.integerAttributes.keys)
                == ["server.address", "server.port", "url.scheme", "network.protocol.version", "http.connection.state"])
            #expect(!measurement.attributes.values.contains { $0.contains("QUERY") || $0.contains("/") })
        }
        #expect(await transport.transfersOnTheWire() == 0)
    }

    /// The built-in exporter's aggregator runs no app code, so curl reports to it in place, on its
    /// loop: the counts come out the same as through the hand-off an app's exporter gets.
    @Test func theBuiltInAggregatorIsToldInPlaceAndCountsTheSame() async throws {
        let exporter = try quietExporter()
        #expect(MetricsConnectionObserver(recorder: MetricsRecorder(exporter: exporter)).callsAreBrief)
        #expect(!MetricsConnectionObserver(recorder: MetricsRecorder(exporter: MeasurementLog())).callsAreBrief)
        var configuration = ServerConfiguration(echoSink: { _ in })
        configuration.metrics = MetricsConfiguration(exporter: exporter)
        let server = ConveyServer(remote: try TestServers.nginx(), configuration: configuration)
        server.transport = CurlTransport()
        for _ in 0..<4 { _ = try await Fetched(server: server, path: "hello.txt").download() }

        func openConnections() throws -> [String: Int64] {
            let snapshot = try #require(exporter.metrics.aggregator.collect())
            let points = try ExportedPoint.parse(OTLPMetricsJSON.body(snapshot, serviceName: "t")).named("http.client.open_connections")
            return Dictionary(points.map { ($0.attributes["http.connection.state"] ?? "", $0.value ?? 0) }, uniquingKeysWith: +)
        }
        try await waitUntil("the connection is idle") { (try? openConnections()) == ["active": 0, "idle": 1] }
        await exporter.shutdown()
    }

    /// On the shared loop (its connections in the transport's share handle) and on loops of its own.
    @Test(arguments: [1, 2])
    func theTransportGoingAwayClosesEachConnectionWithOneDuration(eventLoops: Int) async throws {
        let log = MeasurementLog()
        let url = try TestServers.nginx().url.appending(path: "hello.txt")
        var transport: CurlTransport? = CurlTransport(configuration: .init(eventLoops: eventLoops))
        for _ in 0..<3 { _ = try await #require(transport).send(request(url, reportingTo: log)) }
        try await waitUntil("the connection is idle") { open(log) == (active: 0, idle: 1) }
        #expect(durations(log).isEmpty)

        transport = nil
        try await waitUntil("the connection is closed") { open(log) == (active: 0, idle: 0) && durations(log).count == 1 }
        let duration = try durations(log).required(0)
        #expect(duration.value > 0)
        #expect(duration.attributes["network.protocol.version"] == "1.1")
        #expect(duration.attributes["http.connection.state"] == nil)
        // Opened, three times to idle, twice back to active.
        #expect(log.named("http.client.open_connections").filter { $0.value == 1 }.count == 1 + 3 + 2)
    }

    @Test func concurrentRequestsOpenAConnectionEachAndCloseThemAll() async throws {
        let log = MeasurementLog()
        let url = try TestServers.httpbin().url.appending(path: "delay/1")
        var transport: CurlTransport? = CurlTransport()
        do {
            let sender = try #require(transport)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<3 { group.addTask { _ = try await sender.send(request(url, reportingTo: log)) } }
                try await group.waitForAll()
            }
        }
        try await waitUntil("three connections are idle") { open(log) == (active: 0, idle: 3) }
        transport = nil
        try await waitUntil("the connections are closed") { open(log) == (active: 0, idle: 0) && durations(log).count == 3 }
        #expect(durations(log).allSatisfy { $0.value > 0 })
    }

    @Test func aConnectionTheServerClosedIsRecordedClosedAndReplaced() async throws {
        let log = MeasurementLog()
        let faults = try TestServers.faults().url
        let transport = CurlTransport()
        _ = try await transport.send(request(faults.appending(path: "answer-then-close"), reportingTo: log))
        try await waitUntil("the first connection is idle") { open(log) == (active: 0, idle: 1) }
        // curl finds the idle connection closed when it would reuse it, and opens another.
        _ = try await transport.send(request(faults.appending(path: "health"), reportingTo: log))
        try await waitUntil("the first connection is closed and the second idle") {
            open(log) == (active: 0, idle: 1) && durations(log).count == 1
        }
        #expect(log.named("http.client.open_connections").filter { $0.value == 1 && $0.attributes["http.connection.state"] == "active" }
            .count >= 2)
        #expect(try durations(log).required(0).value > 0)
    }

    @Test func aRefusedConnectionRecordsNoConnection() async throws {
        let log = MeasurementLog()
        let transport = CurlTransport()
        await #expect(throws: URLError.self) { try await transport.send(request(try closedLoopbackURL(), reportingTo: log)) }
        // The observer hears of connections in order: once the next one is reported, a refused
        // one would have been too.
        let nginx = try TestServers.nginx().url
        _ = try await transport.send(request(nginx.appending(path: "hello.txt"), reportingTo: log))
        try await waitUntil("the nginx connection is idle") { open(log) == (active: 0, idle: 1) }
        #expect(log.named("http.client.open_connections").allSatisfy { $0.integerAttributes["server.port"] == nginx.port })
        #expect(durations(log).isEmpty)
    }

    @Test func requestsMultiplexedOverHTTP2ShareOneConnectionReportedAsVersion2() async throws {
        let log = MeasurementLog()
        let url = try TestServers.nginxTLS("/1k.bin")
        var transport: CurlTransport? = CurlTransport(configuration: .init(tls: TLSConfiguration(trustRoots: .only(
            certificatesFile: try TestServers.nginxTLSCertificate()))))
        do {
            let sender = try #require(transport)
            _ = try await sender.send(request(url, reportingTo: log))
            try await waitUntil("the connection is idle") { open(log) == (active: 0, idle: 1) }
            // The host answered over HTTP/2: these share its connection.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { _ = try await sender.send(request(url, reportingTo: log)) } }
                try await group.waitForAll()
            }
        }
        transport = nil
        try await waitUntil("the connection is closed") { open(log) == (active: 0, idle: 0) && durations(log).count == 1 }
        for measurement in log.named("http.client.open_connections") + durations(log) {
            #expect(measurement.attributes["network.protocol.version"] == "2")
            #expect(measurement.attributes["url.scheme"] == "https")
        }
    }

    @Test func theObserverIsNeverCalledOnTheEventLoop() async throws {
        let observer = ThreadRecordingObserver()
        let url = try TestServers.nginx().url.appending(path: "hello.txt")
        var transport: CurlTransport? = CurlTransport()
        for _ in 0..<2 {
            var request = TransportRequest(request: OutgoingRequest(url: url), timeout: .seconds(20))
            request.connectionObserver = observer
            _ = try await #require(transport).send(request)
        }
        transport = nil
        try await waitUntil("the connection is closed") { observer.calls.value.last == "closed" }
        #expect(observer.calls.value == ["opened", "changed", "changed", "changed", "closed"])
        #expect(observer.onALoop.value == 0)
    }

    @Test func requestsWithoutAnObserverReportNothing() async throws {
        let log = MeasurementLog()
        let url = try TestServers.nginx().url.appending(path: "hello.txt")
        let transport = CurlTransport()
        _ = try await transport.send(TransportRequest(request: OutgoingRequest(url: url), timeout: .seconds(20)))
        // The same connection, reused by a request that has an observer: not the observer's.
        _ = try await transport.send(request(url, reportingTo: log))
        let other = try TestServers.httpbin().url.appending(path: "get")
        _ = try await transport.send(request(other, reportingTo: log))
        try await waitUntil("the httpbin connection is idle") { open(log) == (active: 0, idle: 1) }
        #expect(log.named("http.client.open_connections").allSatisfy { $0.integerAttributes["server.port"] == other.port })
    }
}
/// Records which calls it got, and how many came on an event loop's thread.
private final class ThreadRecordingObserver: ConnectionObserver {
    let calls = Locked<[String]>([])
    let onALoop = Locked(0)

    private func called(_ name: String) {
        if CurlEventLoop.isOnAnEventLoop { onALoop.withLock { $0 += 1 } }
        calls.withLock { $0.append(name) }
    }

    func connectionOpened(_ connection: TransportConnection, state: TransportConnection.State) { called("opened") }

    func connectionChanged(_ connection: TransportConnection, from old: TransportConnection.State, to new: TransportConnection.State) {
        called("changed")
    }

    func connectionClosed(_ connection: TransportConnection, state: TransportConnection.State, openFor: Duration) { called("closed") }
}
#endif
