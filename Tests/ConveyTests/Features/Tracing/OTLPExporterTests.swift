import Foundation
import Testing
@_spi(Transport) @testable import Convey

/// The built-in OTLP/HTTP JSON exporter against the collector stand-in
/// (`scripts/otlp-collector.py`), which parses every batch into opentelemetry-proto's
/// `ExportTraceServiceRequest` with unknown fields rejected and checks its hex ids.
@Suite("OTLP exporter", .wire)
@ConveyActor
struct OTLPExporterTests {
    private func key() -> String { "x-" + UUID().uuidString.prefix(12).lowercased() }

    /// An exporter whose retry waits are recorded and return at once, and whose flushes wait for
    /// the retries however long a loaded machine takes (the bound has tests of its own).
    private func exporter(_ collector: URL, queue: Int = 2048, batch: Int = 512, interval: Duration = .seconds(3600),
                          timeout: Duration = .seconds(10), waits: RecordedWaits = RecordedWaits(limit: 1000)) -> OTLPExporter {
        OTLPExporter(collector: collector, headers: [], serviceName: "convey-tests", maximumQueueSize: queue, maximumBatchSize: batch,
                     batchInterval: interval, timeout: timeout, exportTimeout: .seconds(3600), retryWait: waits.sleep)
    }

    @Test("Every batch parses as an ExportTraceServiceRequest, with the ids of the spans the server saw")
    func batchesParseWithOpenTelemetrysMessages() async throws {
        let key = key()
        let exporter = exporter(try TracingServers.collector("ok", key: key), batch: 3)
        let server = try tracedServer(exporter: exporter)
        let serverKey = key + "-s"
        _ = try await TracedGet(server: server, path: "\(serverKey)/ok").download()
        _ = try await TracedGet(server: server, path: "\(serverKey)/redirect").download()
        await #expect(throws: HTTPError.self) { try await TracedGet(server: server, path: "\(serverKey)/status/404").download() }
        await exporter.flush()

        let received = try await TracingServers.received(key)
        #expect(received.errors == [])
        #expect(received.requests >= 3)
        #expect(received.spans.count == 7)
        #expect(exporter.deliveredSpans == 7)
        #expect(exporter.droppedSpans == 0)
        let seen = try await TracingServers.log(serverKey)
        let clients = received.spans.filter { $0.kind == 3 }
        #expect(clients.map(\.spanId) == seen.compactMap(\.parent_span_id))
        #expect(clients.map(\.traceId) == seen.map(\.trace_id))
        for client in clients {
            #expect(received.spans.contains { $0.kind == 1 && $0.spanId == client.parentSpanId && $0.traceId == client.traceId })
        }
        let notFound = try #require(clients.last)
        #expect(notFound.attributes["http.response.status_code"] == .number(404))
        #expect(notFound.attributes["error.type"] == .string("404"))
        #expect(notFound.status == 2)
        #expect(received.spans.allSatisfy { $0.scope == "Convey" && $0.service == "convey-tests" })
        // Its own requests are never traced: no span of a POST to the collector.
        #expect(!received.spans.contains { $0.attributes["url.full"].map { "\($0)".contains("v1/traces") } ?? false })
    }

    @Test("No token, password, cookie, API key or query secret in any exported batch")
    func noSecretsInBatches() async throws {
        let key = key()
        let exporter = exporter(try TracingServers.collector("ok", key: key))
        let base = try #require(TracingServers.tracedURL)
        var components = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
        components.user = "ada"
        components.password = "password-SECRET"
        var configuration = ServerConfiguration(echoSink: EchoCapture().sink)
        configuration.tracing = TracingConfiguration(exporter: exporter)
        let server = ConveyServer(remote: Remote(name: "traced", url: try #require(components.url)), configuration: configuration)
        let secrets: Headers = [
            Header(name: "Authorization", value: "Bearer token-SECRET"), Header(name: "Cookie", value: "session=cookie-SECRET"),
            Header(name: "X-API-Key", value: "apikey-SECRET"),
        ]
        let serverKey = key + "-s"
        _ = try await TracedGet(server: server, path: "\(serverKey)/ok", queryParameters: ["token": "query-SECRET", "page": "2"],
                                extraHeaders: secrets).download()
        _ = try await TracedGet(server: server, path: "\(serverKey)/redirect", queryParameters: ["api_key": "query-SECRET"],
                                extraHeaders: secrets).download()
        await exporter.flush()

        let received = try await TracingServers.received(key)
        try #require(received.batches.count >= 1)
        #expect(received.spans.count == 5)
        for batch in received.batches {
            #expect(!batch.contains("SECRET"))
            #expect(!batch.lowercased().contains("ada@"))
        }
        let urls = received.spans.compactMap { span -> String? in if case .string(let url)? = span.attributes["url.full"] { url } else { nil } }
        #expect(urls.contains { $0.hasSuffix("/\(serverKey)/ok?page=2&token=REDACTED") })
    }

    @Test("The collector down: runs are unaffected, drops are counted, the queue stays within its bound")
    func collectorDown() async throws {
        let waits = RecordedWaits(limit: 1000)
        let exporter = exporter(try closedLoopbackURL(), queue: 8, batch: 4, waits: waits)
        let server = try tracedServer(exporter: exporter)
        let key = key()
        for _ in 0..<30 {
            let response = try await TracedGet(server: server, path: "\(key)/ok").download()
            #expect(response.statusCode == 200)
            #expect(exporter.queuedSpans <= 8)
        }
        await exporter.flush()
        #expect(exporter.deliveredSpans == 0)
        #expect(exporter.droppedSpans == 60)
        #expect(exporter.queuedSpans == 0)
        // Each batch was tried 5 times, with backoff from a second.
        #expect(waits.durations.prefix(4) == [.seconds(1), .seconds(2), .seconds(4), .seconds(8)])
    }

    @Test("A slow collector holds up no run; what does not fit is dropped and counted")
    func slowCollector() async throws {
        let key = key()
        let exporter = exporter(try TracingServers.collector("slow", key: key), queue: 4, batch: 2, timeout: .milliseconds(200))
        let server = try tracedServer(exporter: exporter)
        for _ in 0..<20 {
            let response = try await TracedGet(server: server, path: "\(key)/ok").download()
            #expect(response.statusCode == 200)
            #expect(exporter.queuedSpans <= 4)
        }
        await exporter.shutdown()
        #expect(exporter.droppedSpans + exporter.deliveredSpans == 40)
        #expect(exporter.droppedSpans > 0)
        #expect(exporter.queuedSpans == 0)
    }

    @Test("429 with Retry-After: the exporter waits as long as asked, then delivers")
    func throttled() async throws {
        let key = key()
        let waits = RecordedWaits(limit: 1000)
        let exporter = exporter(try TracingServers.collector("throttle", key: key), waits: waits)
        let server = try tracedServer(exporter: exporter)
        _ = try await TracedGet(server: server, path: "\(key)-s/ok").download()
        await exporter.flush()

        #expect(waits.durations == [.seconds(1)])
        let received = try await TracingServers.received(key)
        #expect(received.requests == 2)
        #expect(received.spans.count == 2)
        #expect(received.errors == [])
        #expect(exporter.deliveredSpans == 2)
        #expect(exporter.droppedSpans == 0)
    }

    @Test("503 without Retry-After: tried 5 times with exponential backoff, then dropped")
    func unavailable() async throws {
        let key = key()
        let waits = RecordedWaits(limit: 1000)
        let exporter = exporter(try TracingServers.collector("unavailable", key: key), waits: waits)
        exporter.export([Self.span()])
        await exporter.flush()
        #expect(waits.durations == [.seconds(1), .seconds(2), .seconds(4), .seconds(8)])
        #expect(try await TracingServers.received(key).requests == 5)
        #expect(exporter.droppedSpans == 1)
    }

    @Test("A batch goes out when the interval passes, without a flush")
    func intervalSendsABatch() async throws {
        let key = key()
        let exporter = exporter(try TracingServers.collector("ok", key: key), interval: .milliseconds(50))
        exporter.export([Self.span()])
        try await waitUntil("the batch was delivered") { exporter.deliveredSpans == 1 }
        #expect(try await TracingServers.received(key).spans.count == 1)
    }

    @Test("After shutdown, spans are dropped and counted")
    func shutdownStops() async throws {
        let key = key()
        let exporter = exporter(try TracingServers.collector("ok", key: key))
        exporter.export([Self.span()])
        await exporter.shutdown()
        exporter.export([Self.span(), Self.span()])
        #expect(exporter.deliveredSpans == 1)
        #expect(exporter.droppedSpans == 2)
        #expect(exporter.endpoint.path().hasSuffix("/ok/\(key)/v1/traces"))
    }

    @Test("Shutdown against a collector that accepts and never answers returns within the export timeout, whatever is queued",
          .timeLimit(.minutes(5)))
    func shutdownIsBounded() async throws {
        let key = key()
        // Each request may take an hour: only the export timeout can end the shutdown.
        let exporter = OTLPExporter(collector: try TracingServers.collector("hang", key: key), headers: [], serviceName: "convey-tests",
                                    maximumQueueSize: 16, maximumBatchSize: 1, batchInterval: .seconds(3600), timeout: .seconds(3600),
                                    exportTimeout: .milliseconds(300), retryWait: { _ in })
        for _ in 0..<4 { exporter.export([Self.span()]) }
        await exporter.shutdown()
        #expect(exporter.deliveredSpans == 0)
        #expect(exporter.droppedSpans == 4)
        #expect(exporter.queuedSpans == 0)
        exporter.export([Self.span()])
        #expect(exporter.droppedSpans == 5)
    }

    @Test("Flush against a collector that never answers returns within the export timeout; the batch stays under way",
          .timeLimit(.minutes(5)))
    func flushIsBounded() async throws {
        let key = key()
        let exporter = OTLPExporter(collector: try TracingServers.collector("hang", key: key), headers: [], serviceName: "convey-tests",
                                    maximumQueueSize: 16, maximumBatchSize: 2, batchInterval: .seconds(3600), timeout: .seconds(3600),
                                    exportTimeout: .milliseconds(200), retryWait: { _ in })
        for _ in 0..<3 { exporter.export([Self.span()]) }
        await exporter.flush()
        #expect(exporter.deliveredSpans == 0)
        #expect(exporter.droppedSpans == 0)
        await exporter.shutdown()
        #expect(exporter.droppedSpans == 3)
    }

    @Test("Spans go to /v1/traces and metrics to /v1/metrics of the same collector, whichever URL is given")
    func endpoints() throws {
        let base = try #require(URL(string: "http://127.0.0.1:4318/prefix"))
        #expect(OTLPSender.endpoint(collector: base, signal: "traces").absoluteString == "http://127.0.0.1:4318/prefix/v1/traces")
        #expect(OTLPSender.endpoint(collector: base, signal: "metrics").absoluteString == "http://127.0.0.1:4318/prefix/v1/metrics")
        let traces = base.appending(path: "v1/traces")
        #expect(OTLPSender.endpoint(collector: traces, signal: "traces") == traces)
        #expect(OTLPSender.endpoint(collector: traces, signal: "metrics").absoluteString == "http://127.0.0.1:4318/prefix/v1/metrics")
        let metrics = base.appending(path: "v1/metrics")
        #expect(OTLPSender.endpoint(collector: metrics, signal: "traces").absoluteString == "http://127.0.0.1:4318/prefix/v1/traces")
    }

    /// A client span, for exporter tests that need no run.
    static func span() -> TraceSpan {
        TraceSpan(trace: TraceIdentifiers.traceID(), span: TraceIdentifiers.spanID(), parent: TraceIdentifiers.spanID(), name: "GET",
                  isClient: true, start: Date(), end: Date(), attributes: ["http.request.method": "GET"],
                  integerAttributes: ["http.response.status_code": 200], isError: false, statusMessage: nil, traceState: nil)
    }
}
