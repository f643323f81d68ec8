import Foundation
import Testing
@_spi(Transport) @testable import Convey

// A stand-in for the part of swift-metrics (module `Metrics`, 2.x) that the adapter in
// Docs/metrics.md uses, with the same names and shapes, so that the adapter compiles here as
// written there. The real package is not a dependency: Convey takes none.

/// What the stand-in instruments were given: label, dimensions, and each value.
private final class MetricsBackend: Sendable {
    struct Entry: Sendable, Equatable {
        let instrument: String
        let label: String
        let dimensions: [String]
        let value: Double
    }

    private let entries = Locked<[Entry]>([])

    func add(_ instrument: String, _ label: String, _ dimensions: [(String, String)], _ value: Double) {
        entries.withLock { $0.append(Entry(instrument: instrument, label: label, dimensions: dimensions.map { "\($0.0)=\($0.1)" }, value: value)) }
    }

    var all: [Entry] { entries.value }
}

private enum MetricsSystem {
    static let backend = MetricsBackend()
}

private final class Counter {
    let label: String
    let dimensions: [(String, String)]
    init(label: String, dimensions: [(String, String)] = []) {
        self.label = label
        self.dimensions = dimensions
    }
    func increment<DataType: BinaryInteger>(by amount: DataType) { MetricsSystem.backend.add("counter", label, dimensions, Double(amount)) }
}

private final class Meter {
    let label: String
    let dimensions: [(String, String)]
    init(label: String, dimensions: [(String, String)] = []) {
        self.label = label
        self.dimensions = dimensions
    }
    func increment<DataType: BinaryFloatingPoint>(by amount: DataType) { MetricsSystem.backend.add("meter", label, dimensions, Double(amount)) }
    func decrement<DataType: BinaryFloatingPoint>(by amount: DataType) { MetricsSystem.backend.add("meter", label, dimensions, -Double(amount)) }
}

private final class Timer {
    let label: String
    let dimensions: [(String, String)]
    init(label: String, dimensions: [(String, String)] = []) {
        self.label = label
        self.dimensions = dimensions
    }
    func recordNanoseconds(_ duration: Int64) { MetricsSystem.backend.add("timer", label, dimensions, Double(duration)) }
}

private final class Recorder {
    let label: String
    let dimensions: [(String, String)]
    init(label: String, dimensions: [(String, String)] = [], aggregate: Bool = true) {
        self.label = label
        self.dimensions = dimensions
    }
    func record<DataType: BinaryFloatingPoint>(_ value: DataType) { MetricsSystem.backend.add("recorder", label, dimensions, Double(value)) }
}

// The adapter, exactly as Docs/metrics.md shows it.

/// Forwards Convey's measurements to the metrics backend the app bootstrapped (`MetricsSystem.bootstrap`).
private struct SwiftMetricsExporter: MetricsExporter {
    func record(_ measurement: MetricMeasurement) {
        let dimensions = (measurement.attributes.map { ($0.key, $0.value) }
            + measurement.integerAttributes.map { ($0.key, String($0.value)) }).sorted { $0.0 < $1.0 }
        switch measurement.kind {
        case .counter:
            Counter(label: measurement.name, dimensions: dimensions).increment(by: Int64(measurement.value))
        case .upDownCounter where measurement.value < 0:
            Meter(label: measurement.name, dimensions: dimensions).decrement(by: -measurement.value)
        case .upDownCounter:
            Meter(label: measurement.name, dimensions: dimensions).increment(by: measurement.value)
        case .histogram where measurement.unit == "s":
            Timer(label: measurement.name, dimensions: dimensions).recordNanoseconds(Int64(measurement.value * 1_000_000_000))
        case .histogram:
            Recorder(label: measurement.name, dimensions: dimensions).record(measurement.value)
        }
    }
}

@Suite("The swift-metrics adapter of Docs/metrics.md")
struct SwiftMetricsAdapterTests {
    @Test("A request and a cache hit reach swift-metrics' instruments with their dimensions")
    func forwardsMeasurements() throws {
        let recorder = MetricsConfiguration(exporter: SwiftMetricsExporter()).recorder
        let host = "adapter-\(UUID().uuidString.prefix(8).lowercased()).example.com"
        WireRequest.answered("https://\(host)/items", 404, seconds: 0.25, sent: nil, received: 10).record(on: recorder)
        var cache = MetricAttributes(method: .get, url: try #require(URL(string: "https://\(host)/items")))
        cache.cacheStatus = .hit
        recorder.cacheRequest(cache)

        let entries = MetricsSystem.backend.all.filter { $0.dimensions.contains("server.address=\(host)") }
        let request = ["error.type=404", "http.request.method=GET", "http.response.status_code=404", "network.protocol.version=1.1",
                       "server.address=\(host)", "server.port=443", "url.scheme=https"]
        let active = ["http.request.method=GET", "server.address=\(host)", "server.port=443", "url.scheme=https"]
        #expect(entries == [
            .init(instrument: "meter", label: "http.client.active_requests", dimensions: active, value: 1),
            .init(instrument: "timer", label: "http.client.request.duration", dimensions: request, value: 250_000_000),
            .init(instrument: "recorder", label: "http.client.response.body.size", dimensions: request, value: 10),
            .init(instrument: "meter", label: "http.client.active_requests", dimensions: active, value: -1),
            .init(instrument: "counter", label: "convey.cache.requests", dimensions: ["convey.cache.status=hit"] + active, value: 1),
        ])
    }
}
