import Foundation
import Testing
@_spi(Transport) @testable import Convey

/// What the recorder makes of each kind of run, fed the values the pipeline's metrics step gives
/// it: the instruments' names, units, kinds, bucket boundaries and attributes, through the
/// built-in exporter's aggregation (read back from its OTLP JSON) and through an exporter of the
/// app's own (each measurement).
@Suite("Metrics recorder")
struct MetricsRecorderTests {
    /// One kind of run: the requests it put on the wire, its cache outcome, and the attributes
    /// of the duration points they make (every attribute as text).
    struct Scenario: Sendable, CustomTestStringConvertible {
        let name: String
        let requests: [WireRequest]
        var cache: CacheStatus? = nil
        let expected: [[String: String]]

        var testDescription: String { name }
    }

    static let api = "https://api.example.com/v1/items?token=query-SECRET"

    static let scenarios: [Scenario] = [
        Scenario(name: "success", requests: [.answered(api, 200)], expected: [
            ["http.request.method": "GET", "server.address": "api.example.com", "server.port": "443", "url.scheme": "https",
             "http.response.status_code": "200", "network.protocol.version": "1.1"],
        ]),
        Scenario(name: "404", requests: [.answered(api, 404, version: "HTTP/2")], expected: [
            ["http.request.method": "GET", "server.address": "api.example.com", "server.port": "443", "url.scheme": "https",
             "http.response.status_code": "404", "error.type": "404", "network.protocol.version": "2"],
        ]),
        Scenario(name: "500", requests: [.answered("http://127.0.0.1:8080/orders", 500, method: .post, sent: 64)], expected: [
            ["http.request.method": "POST", "server.address": "127.0.0.1", "server.port": "8080", "url.scheme": "http",
             "http.response.status_code": "500", "error.type": "500", "network.protocol.version": "1.1"],
        ]),
        Scenario(name: "a retry after 503", requests: [.answered(api, 503), .answered(api, 200)], expected: [
            ["http.request.method": "GET", "server.address": "api.example.com", "server.port": "443", "url.scheme": "https",
             "http.response.status_code": "503", "error.type": "503", "network.protocol.version": "1.1"],
            ["http.request.method": "GET", "server.address": "api.example.com", "server.port": "443", "url.scheme": "https",
             "http.response.status_code": "200", "network.protocol.version": "1.1"],
        ]),
        Scenario(name: "a redirect", requests: [.answered(api, 302, received: 0), .answered("https://[::1]:8443/moved", 200)], expected: [
            ["http.request.method": "GET", "server.address": "api.example.com", "server.port": "443", "url.scheme": "https",
             "http.response.status_code": "302", "network.protocol.version": "1.1"],
            ["http.request.method": "GET", "server.address": "::1", "server.port": "8443", "url.scheme": "https",
             "http.response.status_code": "200", "network.protocol.version": "1.1"],
        ]),
        Scenario(name: "a cache hit", requests: [], cache: .hit, expected: []),
        Scenario(name: "a timeout", requests: [.failed(api, ConveyError.attemptTimedOut(limit: .seconds(1), url: nil), seconds: 1)], expected: [
            ["http.request.method": "GET", "server.address": "api.example.com", "server.port": "443", "url.scheme": "https",
             "error.type": "attemptTimedOut"],
        ]),
        Scenario(name: "a refused connection",
                 requests: [.failed("http://127.0.0.1:9/", ConveyError.transport(.cannotConnect, url: nil, code: 7, reason: "refused"))], expected: [
            ["http.request.method": "GET", "server.address": "127.0.0.1", "server.port": "9", "url.scheme": "http", "error.type": "transport"],
        ]),
        Scenario(name: "a cancellation", requests: [.failed(api, CancellationError(), method: HTTPMethod(rawValue: "PURGE"))], expected: [
            ["http.request.method": "_OTHER", "server.address": "api.example.com", "server.port": "443", "url.scheme": "https",
             "error.type": "cancelled"],
        ]),
    ]

    /// The attribute names an instrument may carry: the conventions' for it, and Convey's cache outcome.
    static let allowedAttributes: [String: Set<String>] = [
        "http.client.request.duration": ["http.request.method", "server.address", "server.port", "url.scheme", "http.response.status_code",
                                         "error.type", "network.protocol.version"],
        "http.client.request.body.size": ["http.request.method", "server.address", "server.port", "url.scheme", "http.response.status_code",
                                          "error.type", "network.protocol.version"],
        "http.client.response.body.size": ["http.request.method", "server.address", "server.port", "url.scheme", "http.response.status_code",
                                           "error.type", "network.protocol.version"],
        "http.client.active_requests": ["http.request.method", "server.address", "server.port", "url.scheme"],
        "convey.cache.requests": ["http.request.method", "server.address", "server.port", "url.scheme", "convey.cache.status"],
        "http.client.open_connections": ["server.address", "server.port", "url.scheme", "network.protocol.version", "http.connection.state"],
        "http.client.connection.duration": ["server.address", "server.port", "url.scheme", "network.protocol.version"],
    ]

    /// Each instrument's unit and kind, as the conventions give them.
    static let shapes: [String: (unit: String, kind: String, monotonic: Bool?)] = [
        "http.client.request.duration": ("s", "histogram", nil),
        "http.client.request.body.size": ("By", "histogram", nil),
        "http.client.response.body.size": ("By", "histogram", nil),
        "http.client.active_requests": ("{request}", "sum", false),
        "http.client.open_connections": ("{connection}", "sum", false),
        "http.client.connection.duration": ("s", "histogram", nil),
        "convey.cache.requests": ("{request}", "sum", true),
    ]

    /// Records `scenario` on `recorder`.
    private func record(_ scenario: Scenario, on recorder: MetricsRecorder) throws {
        for request in scenario.requests { request.record(on: recorder) }
        if let cache = scenario.cache {
            var attributes = MetricAttributes(method: .get, url: try #require(URL(string: Self.api)))
            attributes.cacheStatus = cache
            recorder.cacheRequest(attributes)
        }
    }

    @Test("Through the built-in exporter: names, units, kinds, boundaries and attributes", arguments: scenarios)
    func aggregated(_ scenario: Scenario) throws {
        let exporter = try quietExporter()
        try record(scenario, on: MetricsConfiguration(exporter: exporter).recorder)
        let snapshot = try #require(exporter.metrics.aggregator.collect())
        let body = OTLPMetricsJSON.body(snapshot, serviceName: "convey-tests")
        let points = try ExportedPoint.parse(body)

        for point in points {
            let shape = try #require(Self.shapes[point.name], "an instrument the conventions do not name: \(point.name)")
            #expect(point.unit == shape.unit, "\(point.name)")
            #expect(point.kind == shape.kind, "\(point.name)")
            #expect(point.isMonotonic == shape.monotonic, "\(point.name)")
            #expect(Set(point.attributes.keys).isSubset(of: Self.allowedAttributes[point.name] ?? []), "\(point.name): \(point.attributes.keys)")
        }
        let durations = points.named("http.client.request.duration")
        #expect(Set(durations.map(\.attributes)) == Set(scenario.expected))
        #expect(durations.allSatisfy { $0.count == 1 && $0.bounds == MetricInstrument.requestDurationBoundaries && $0.buckets?.count == 15 })
        #expect(durations.allSatisfy { $0.temporality == 2 })
        // Every request that started ended: nothing is in flight.
        #expect(points.named("http.client.active_requests").allSatisfy { $0.value == 0 })
        #expect(points.named("http.client.active_requests").count == Set(scenario.requests.map(\.url.host)).count)
        // Response bodies are measured when their size is known, request bodies when there is one.
        #expect(points.named("http.client.response.body.size").compactMap(\.count).reduce(0, +) == UInt64(scenario.requests.compactMap(\.responseBodySize).count))
        #expect(points.named("http.client.request.body.size").count == scenario.requests.compactMap(\.requestBodySize).count)
        let cache = points.named("convey.cache.requests")
        if let status = scenario.cache {
            try #require(cache.count == 1)
            #expect(cache[0].attributes["convey.cache.status"] == status.rawValue)
            #expect(cache[0].value == 1)
            #expect(cache[0].temporality == 2)
        } else {
            #expect(cache.isEmpty)
        }
        let text = String(decoding: body, as: UTF8.self)
        #expect(!text.contains("SECRET"))
        #expect(!text.contains("/v1/items"))
        #expect(!text.contains("/moved"))
    }

    @Test("Through an exporter of the app's own: each measurement, with its name, unit, kind and attributes", arguments: scenarios)
    func perMeasurement(_ scenario: Scenario) throws {
        let log = MeasurementLog()
        try record(scenario, on: MetricsRecorder(exporter: log))
        let durations = log.named("http.client.request.duration")
        #expect(durations.count == scenario.requests.count)
        let attributes = durations.map { measurement in
            measurement.attributes.merging(measurement.integerAttributes.mapValues(String.init)) { $1 }
        }
        #expect(Set(attributes) == Set(scenario.expected))
        #expect(durations.allSatisfy { $0.unit == "s" && $0.kind == .histogram && $0.traceID == nil && $0.spanID == nil })
        #expect(zip(durations, scenario.requests).allSatisfy { abs($0.value - $1.seconds) < 1e-9 })
        let active = log.named("http.client.active_requests")
        #expect(active.map(\.value).reduce(0, +) == 0)
        #expect(active.count == 2 * scenario.requests.count)
        #expect(active.allSatisfy { $0.kind == .upDownCounter && $0.unit == "{request}" && $0.integerAttributes["http.response.status_code"] == nil })
        #expect(log.named("http.client.response.body.size").allSatisfy { $0.unit == "By" && $0.kind == .histogram })
        let cache = log.named("convey.cache.requests")
        #expect(cache.map { $0.attributes["convey.cache.status"] } == (scenario.cache.map { [$0.rawValue] } ?? []))
        #expect(cache.allSatisfy { $0.kind == .counter && $0.value == 1 })
        for measurement in log.measurements {
            #expect(!measurement.attributes.values.contains { $0.contains("SECRET") || $0.contains("/") })
        }
    }

    @Test("Connections: open ones counted by state, their duration recorded when they close")
    func connections() throws {
        let exporter = try quietExporter()
        let log = MeasurementLog()
        var attributes = MetricAttributes(method: .get, url: try #require(URL(string: "https://api.example.com/a")))
        attributes.protocolVersion = "2"
        for recorder in [MetricsRecorder(exporter: exporter), MetricsRecorder(exporter: log)] {
            recorder.connectionOpened(attributes, state: .active)
            recorder.connectionOpened(attributes, state: .active)
            recorder.connectionChanged(attributes, from: .active, to: .idle)
            recorder.connectionClosed(attributes, state: .idle, duration: .milliseconds(1500))
        }
        let points = try ExportedPoint.parse(OTLPMetricsJSON.body(try #require(exporter.metrics.aggregator.collect()), serviceName: "t"))
        let open = points.named("http.client.open_connections")
        #expect(Dictionary(uniqueKeysWithValues: open.map { ($0.attributes["http.connection.state"] ?? "", $0.value) }) == ["active": 1, "idle": 0])
        #expect(open.allSatisfy { $0.attributes["server.address"] == "api.example.com" && $0.attributes["network.protocol.version"] == "2" })
        #expect(open.allSatisfy { $0.attributes["http.request.method"] == nil })
        let durations = points.named("http.client.connection.duration")
        try #require(durations.count == 1)
        #expect(durations[0].bounds == [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300])
        #expect(durations[0].sum == 1.5)
        #expect(durations[0].unit == "s")
        #expect(log.named("http.client.open_connections").map(\.value) == [1, 1, -1, 1, -1])
        #expect(log.named("http.client.connection.duration").map(\.value) == [1.5])
    }
}
