import Foundation
import Testing
@_spi(Transport) @testable import Convey

/// The built-in exporter's metrics against the collector stand-in (`scripts/otlp-collector.py`),
/// which parses every batch into opentelemetry-proto's `ExportMetricsServiceRequest` with unknown
/// fields rejected and checks exemplars' hex ids.
@Suite("OTLP metrics export", .wire)
struct OTLPMetricsExportTests {
    private func key() -> String { "m-" + UUID().uuidString.prefix(12).lowercased() }

    /// An exporter whose retry waits are recorded and return at once, sending metrics only when flushed unless `interval` says;
    /// flushes wait for the retries however long a loaded machine takes, unless `exportTimeout` says.
    private func exporter(_ collector: URL, timeout: Duration = .seconds(10), interval: Duration = .seconds(3600),
                          temporality: OTLPExporter.Temporality = .cumulative, cardinalityLimit: Int = 2000,
                          exportTimeout: Duration = .seconds(3600), waits: RecordedWaits = RecordedWaits(limit: 1000)) -> OTLPExporter {
        OTLPExporter(collector: collector, headers: [], serviceName: "convey-tests",
                     maximumQueueSize: 64, maximumBatchSize: 64, batchInterval: .seconds(3600), timeout: timeout, exportTimeout: exportTimeout,
                     metricsInterval: interval, temporality: temporality, cardinalityLimit: cardinalityLimit, retryWait: waits.sleep)
    }

    /// A run of each kind, recorded as the pipeline's step records them, with the trace of the first as an exemplar.
    private func recordRuns(on recorder: MetricsRecorder) {
        let api = "https://ada:password-SECRET@api.example.com/v1/users/42?token=query-SECRET&api_key=apikey-SECRET"
        let trace = TraceID(high: 0x0af7_6519_16cd_43dd, low: 0x8448_eb21_1c80_319c)
        WireRequest.answered(api, 200, version: "HTTP/2").record(on: recorder, exemplar: MetricExemplar(trace: trace, span: 0xb7ad_6b71_6920_3331))
        WireRequest.answered(api, 404).record(on: recorder)
        WireRequest.answered("http://127.0.0.1:8080/orders?session=cookie-SECRET", 500, method: .post, sent: 512).record(on: recorder)
        WireRequest.answered(api, 503).record(on: recorder)
        WireRequest.answered(api, 200).record(on: recorder)
        WireRequest.failed(api, ConveyError.attemptTimedOut(limit: .seconds(1), url: nil), seconds: 1).record(on: recorder)
        WireRequest.failed("http://127.0.0.1:9/", ConveyError.transport(.cannotConnect, url: nil, code: 7, reason: "refused")).record(on: recorder)
        WireRequest.failed(api, ConveyError.cancelled).record(on: recorder)
        var cache = MetricAttributes(method: .get, url: URL(string: api)!)
        cache.cacheStatus = .hit
        recorder.cacheRequest(cache)
    }

    @Test("Every batch parses as an ExportMetricsServiceRequest: names, units, kinds, boundaries, attributes, exemplar, resource")
    func batchesParseWithOpenTelemetrysMessages() async throws {
        let key = key()
        let exporter = exporter(try TracingServers.collector("ok", key: key))
        recordRuns(on: MetricsConfiguration(exporter: exporter).recorder)
        await exporter.flush()

        let received = try await TracingServers.received(key)
        #expect(received.errors == [])
        #expect(received.requests == 1)
        #expect(exporter.metrics.counts.droppedPoints == 0)
        #expect(exporter.metrics.counts.deliveredPoints == received.metrics.count)
        #expect(received.metrics.allSatisfy { $0.service == "convey-tests" && $0.scope == "Convey" })
        let durations = received.metrics.filter { $0.name == "http.client.request.duration" }
        #expect(durations.allSatisfy { $0.unit == "s" && $0.kind == "histogram" && $0.temporality == 2 })
        #expect(durations.allSatisfy { $0.explicitBounds == MetricInstrument.requestDurationBoundaries })
        #expect(durations.compactMap(\.count).reduce(0, +) == 8)
        let errorTypes = Set(durations.compactMap { $0.textAttributes["error.type"] })
        #expect(errorTypes == ["404", "500", "503", "attemptTimedOut", "transport", "cancelled"])
        let success = try #require(durations.first { $0.textAttributes["network.protocol.version"] == "2" })
        #expect(success.textAttributes == ["http.request.method": "GET", "server.address": "api.example.com", "server.port": "443",
                                           "url.scheme": "https", "http.response.status_code": "200", "network.protocol.version": "2"])
        #expect(success.exemplars?.map(\.traceId) == ["0af7651916cd43dd8448eb211c80319c"])
        #expect(success.exemplars?.map(\.spanId) == ["b7ad6b7169203331"])
        let active = received.metrics.filter { $0.name == "http.client.active_requests" }
        #expect(active.allSatisfy { $0.kind == "sum" && !$0.isMonotonic && $0.value == 0 && $0.unit == "{request}" })
        let cache = try #require(received.metrics.first { $0.name == "convey.cache.requests" })
        #expect(cache.isMonotonic)
        #expect(cache.value == 1)
        #expect(cache.textAttributes["convey.cache.status"] == "hit")
        let requestBodies = received.metrics.filter { $0.name == "http.client.request.body.size" }
        #expect(requestBodies.map(\.unit) == ["By"])
        #expect(requestBodies.first?.sum == 512)
    }

    @Test("No token, password, cookie, API key or query secret in any batch")
    func noSecretsInBatches() async throws {
        let key = key()
        let exporter = exporter(try TracingServers.collector("ok", key: key))
        recordRuns(on: MetricsConfiguration(exporter: exporter).recorder)
        await exporter.flush()
        let received = try await TracingServers.received(key)
        try #require(received.batches.count == 1)
        for batch in received.batches {
            #expect(!batch.contains("SECRET"))
            #expect(!batch.contains("password"))
            #expect(!batch.contains("ada@"))
            #expect(!batch.contains("/v1/users"))
        }
    }

    @Test("One exporter for both signals: spans to /v1/traces, metrics to /v1/metrics, one flush sends both")
    func bothSignals() async throws {
        let key = key()
        let exporter = exporter(try TracingServers.collector("ok", key: key))
        exporter.export([await OTLPExporterTests.span()])
        WireRequest.answered("https://api.example.com/", 200).record(on: MetricsRecorder(exporter: exporter))
        await exporter.flush()
        let received = try await TracingServers.received(key)
        #expect(received.errors == [])
        #expect(received.requests == 2)
        #expect(received.spans.count == 1)
        #expect(received.metrics.contains { $0.name == "http.client.request.duration" })
        #expect(exporter.deliveredSpans == 1)
    }

    @Test("Metrics go out when the interval passes, without a flush; cumulative totals grow from one export to the next")
    func intervalSendsMetrics() async throws {
        let key = key()
        let exporter = exporter(try TracingServers.collector("ok", key: key), interval: .milliseconds(50))
        let recorder = MetricsRecorder(exporter: exporter)
        WireRequest.answered("https://api.example.com/", 200).record(on: recorder)
        try await waitUntil("a collection was delivered") { exporter.metrics.counts.exports >= 1 }
        WireRequest.answered("https://api.example.com/", 200).record(on: recorder)
        await exporter.flush()
        let received = try await TracingServers.received(key)
        #expect(received.errors == [])
        let counts = received.metrics.filter { $0.name == "http.client.request.duration" }.compactMap(\.count)
        #expect(counts.first == 1)
        #expect(counts.last == 2)
        await exporter.shutdown()
    }

    @Test("Delta temporality on the wire: each export has what happened since the previous one")
    func deltaOnTheWire() async throws {
        let key = key()
        let exporter = exporter(try TracingServers.collector("ok", key: key), temporality: .delta)
        let recorder = MetricsRecorder(exporter: exporter)
        for _ in 0..<3 { WireRequest.answered("https://api.example.com/", 200).record(on: recorder) }
        await exporter.flush()
        WireRequest.answered("https://api.example.com/", 200).record(on: recorder)
        await exporter.flush()
        let received = try await TracingServers.received(key)
        #expect(received.errors == [])
        let durations = received.metrics.filter { $0.name == "http.client.request.duration" }
        #expect(durations.map(\.count) == [3, 1])
        #expect(durations.allSatisfy { $0.temporality == 1 })
        #expect(durations.last?.start == durations.first?.time)
        #expect(received.metrics.filter { $0.name == "http.client.active_requests" }.allSatisfy { $0.temporality == 2 })
    }

    @Test("429 with Retry-After: the export waits as long as asked, then delivers")
    func throttled() async throws {
        let key = key()
        let waits = RecordedWaits(limit: 1000)
        let exporter = exporter(try TracingServers.collector("throttle", key: key), waits: waits)
        WireRequest.answered("https://api.example.com/", 200).record(on: MetricsRecorder(exporter: exporter))
        await exporter.flush()
        #expect(waits.durations == [.seconds(1)])
        let received = try await TracingServers.received(key)
        #expect(received.requests == 2)
        #expect(received.errors == [])
        #expect(exporter.metrics.counts.droppedPoints == 0)
        #expect(exporter.metrics.counts.deliveredPoints > 0)
    }

    @Test("The collector down: recording is unaffected, the collection is dropped and counted, the series stay within the limit")
    func collectorDown() async throws {
        let waits = RecordedWaits(limit: 1000)
        let exporter = exporter(try closedLoopbackURL(), cardinalityLimit: 50, waits: waits)
        let recorder = MetricsRecorder(exporter: exporter)
        for host in 0..<5000 {
            WireRequest.answered("https://host\(host).example.com/", 200).record(on: recorder)
        }
        await exporter.flush()
        #expect(waits.durations.prefix(4) == [.seconds(1), .seconds(2), .seconds(4), .seconds(8)])
        #expect(exporter.metrics.counts.deliveredPoints == 0)
        #expect(exporter.metrics.counts.droppedPoints > 0)
        // 50 series an instrument at most, however many hosts: the rest went to the overflow series.
        let snapshot = try #require(exporter.metrics.aggregator.collect())
        #expect(snapshot.requests.count == 50)
        #expect(snapshot.activeRequests.count == 50)
        #expect(snapshot.requests.map(\.point.duration.count).reduce(0, +) == 5000)
    }

    @Test("A slow collector holds up no recording; the export gives up at its timeout and counts the drop")
    func slowCollector() async throws {
        let key = key()
        let exporter = exporter(try TracingServers.collector("slow", key: key), timeout: .milliseconds(200))
        let recorder = MetricsRecorder(exporter: exporter)
        for _ in 0..<100 { WireRequest.answered("https://api.example.com/", 200).record(on: recorder) }
        await exporter.shutdown()
        #expect(exporter.metrics.counts.exports == 1)
        #expect(exporter.metrics.counts.deliveredPoints + exporter.metrics.counts.droppedPoints > 0)
        WireRequest.answered("https://api.example.com/", 200).record(on: recorder)
        #expect(exporter.metrics.aggregator.collect()?.requests.first?.point.duration.count == 100)
    }

    @Test("Shutdown with metrics waiting, against a collector that never answers, returns within the export timeout",
          .timeLimit(.minutes(5)))
    func shutdownIsBounded() async throws {
        let key = key()
        let exporter = exporter(try TracingServers.collector("hang", key: key), timeout: .seconds(3600), exportTimeout: .milliseconds(300))
        WireRequest.answered("https://api.example.com/", 200).record(on: MetricsRecorder(exporter: exporter))
        exporter.export([await OTLPExporterTests.span()])
        await exporter.shutdown()
        #expect(exporter.deliveredSpans == 0)
        #expect(exporter.droppedSpans == 1)
        #expect(exporter.metrics.counts.deliveredPoints == 0)
    }
}
