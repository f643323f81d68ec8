import Foundation
import Testing
@_spi(Transport) @testable import Convey

/// Tracing on the wire, against a server instrumented with OpenTelemetry's own Python SDK
/// (`scripts/traced-server.py`): what it extracts with its W3C propagator, and the spans Convey
/// makes for success, statuses, a retry, a redirect, a cache hit, a timeout and a cancellation.
@Suite("Tracing on the wire", .wire)
@ConveyActor
struct TracingWireTests {
    private func key() -> String { "t-" + UUID().uuidString.prefix(12).lowercased() }

    private var curlMeasures: Bool { BuiltInTransport.platformDefault == .curl }

    @Test("The OpenTelemetry server's span is a child of the attempt's client span, in Convey's trace")
    func serverContinuesConveysTrace() async throws {
        let spans = SpanCollector()
        let server = try tracedServer(exporter: spans)
        let key = key()
        let response = try await TracedGet(server: server, path: "\(key)/ok").download()
        #expect(response.statusCode == 200)

        let seen = try #require(try await TracingServers.log(key).first)
        let client = try #require(spans.clientSpans.first)
        let run = try #require(spans.runSpans.first)
        #expect(spans.spans.count == 2)
        #expect(seen.trace_id == client.traceID)
        #expect(seen.parent_span_id == client.spanID)
        #expect(seen.remote_sampled == true)
        #expect(seen.recording)
        #expect(client.parentSpanID == run.spanID)
        #expect(run.traceID == client.traceID)
        #expect(run.parentSpanID == nil)

        let port = try #require(TracingServers.tracedURL?.port)
        #expect(client.name == "GET")
        #expect(client.attributes["http.request.method"] == "GET")
        #expect(client.attributes["server.address"] == "127.0.0.1")
        #expect(client.integerAttributes["server.port"] == port)
        #expect(client.attributes["url.full"] == "http://127.0.0.1:\(port)/\(key)/ok")
        #expect(client.integerAttributes["http.response.status_code"] == 200)
        #expect(client.attributes["network.protocol.version"] == "1.1")
        #expect(client.attributes["error.type"] == nil)
        #expect(client.integerAttributes["http.request.resend_count"] == nil)
        #expect(!client.isError)
        if curlMeasures {
            #expect(client.events.map(\.name) == ["convey.dns_done", "convey.connected", "convey.first_byte", "convey.transfer_done"])
        }
        #expect(run.name == "TracedGet")
        #expect(run.attributes["convey.cache.status"] == "network")
        #expect(run.integerAttributes["convey.attempts"] == 1)
        #expect(run.integerAttributes["http.response.status_code"] == 200)
        #expect(!run.isError)
    }

    @Test("A run inside the app's context continues it: same trace, the app's span as parent, tracestate unchanged")
    func continuesAValidContext() async throws {
        let spans = SpanCollector()
        let server = try tracedServer(exporter: spans)
        let key = key()
        let incoming = try #require(TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                                                 tracestate: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"))
        _ = try await TraceContext.$current.withValue(incoming) { try await TracedGet(server: server, path: "\(key)/ok").download() }

        let seen = try #require(try await TracingServers.log(key).first)
        let run = try #require(spans.runSpans.first)
        let client = try #require(spans.clientSpans.first)
        #expect(seen.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(seen.parent_span_id == client.spanID)
        #expect(seen.tracestate == "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
        #expect(seen.remote_trace_state == "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
        #expect(run.parentSpanID == "00f067aa0ba902b7")
        #expect(run.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(run.traceState == "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
    }

    @Test("An invalid incoming value is replaced by a new trace and never sent on", arguments: TraceContextTests.invalid)
    func replacesAnInvalidContext(_ name: String, _ invalid: String) async throws {
        let spans = SpanCollector()
        let server = try tracedServer(exporter: spans)
        let key = key()
        // As a server would continue it, and as a field the task sets itself: neither goes out.
        let task = TracedGet(server: server, path: "\(key)/ok", extraHeaders: [Header(name: "traceparent", value: invalid)])
        _ = try await TraceContext.$current.withValue(TraceContext(traceparent: invalid, tracestate: "a=b")) { try await task.download() }

        let seen = try #require(try await TracingServers.log(key).first)
        let sent = try #require(seen.traceparent)
        #expect(sent != invalid, "\(name)")
        #expect(TraceContext(traceparent: sent) != nil)
        #expect(seen.tracestate == nil)
        #expect(seen.remote_trace_id == spans.runSpans.first?.traceID)
        #expect(spans.runSpans.first?.parentSpanID == nil)
        if invalid.count >= 35 { #expect(!sent.contains(invalid.dropFirst(3).prefix(32))) }
    }

    @Test("An unsampled context is honoured: sent with its flag off, and no span is exported")
    func honoursAnUnsampledContext() async throws {
        let spans = SpanCollector()
        let server = try tracedServer(exporter: spans)
        let key = key()
        let incoming = try #require(TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"))
        _ = try await TraceContext.$current.withValue(incoming) { try await TracedGet(server: server, path: "\(key)/ok").download() }

        let seen = try #require(try await TracingServers.log(key).first)
        #expect(seen.remote_trace_id == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(seen.remote_sampled == false)
        #expect(seen.remote_span_id != "00f067aa0ba902b7")
        #expect(seen.traceparent?.hasSuffix("-00") == true)
        #expect(!seen.recording)
        #expect(spans.spans.isEmpty)
    }

    @Test("404 and 500: the status, error.type and an error status on both spans", arguments: [404, 500])
    func statusErrors(_ status: Int) async throws {
        let spans = SpanCollector()
        let server = try tracedServer(exporter: spans)
        let key = key()
        await #expect(throws: HTTPError.self) { try await TracedGet(server: server, path: "\(key)/status/\(status)").download() }

        let client = try #require(spans.clientSpans.first)
        let run = try #require(spans.runSpans.first)
        #expect(client.integerAttributes["http.response.status_code"] == status)
        #expect(client.attributes["error.type"] == String(status))
        #expect(client.isError)
        #expect(run.integerAttributes["http.response.status_code"] == status)
        #expect(run.attributes["error.type"] == String(status))
        #expect(run.isError)
        #expect(try await TracingServers.log(key).first?.parent_span_id == client.spanID)
    }

    @Test("A retry after 503 is a client span of its own, with http.request.resend_count 1")
    func retryAfter503() async throws {
        let spans = SpanCollector()
        let waiter = RecordingRetryWaiter()
        let server = try tracedServer(exporter: spans) {
            $0.retryPolicy = .standard
            $0.retryWaiter = waiter
        }
        let key = key()
        let response = try await TracedGet(server: server, path: "\(key)/flaky").download()
        #expect(response.statusCode == 200)

        let clients = spans.clientSpans
        try #require(clients.count == 2)
        #expect(clients[0].integerAttributes["http.response.status_code"] == 503)
        #expect(clients[0].attributes["error.type"] == "503")
        #expect(clients[0].isError)
        #expect(clients[0].integerAttributes["http.request.resend_count"] == nil)
        #expect(clients[1].integerAttributes["http.response.status_code"] == 200)
        #expect(clients[1].integerAttributes["http.request.resend_count"] == 1)
        #expect(!clients[1].isError)
        let seen = try await TracingServers.log(key)
        #expect(seen.map(\.parent_span_id) == clients.map(\.spanID))
        let run = try #require(spans.runSpans.first)
        #expect(run.integerAttributes["convey.attempts"] == 2)
        #expect(!run.isError)
        #expect(Set(clients.map(\.parentSpanID)) == [run.spanID])
    }

    @Test("Each redirect hop is a client span of its own")
    func redirectHops() async throws {
        let spans = SpanCollector()
        let server = try tracedServer(exporter: spans)
        let key = key()
        _ = try await TracedGet(server: server, path: "\(key)/redirect").download()

        let clients = spans.clientSpans
        try #require(clients.count == 2)
        #expect(clients[0].integerAttributes["http.response.status_code"] == 302)
        #expect(!clients[0].isError)
        #expect(clients[0].attributes["url.full"]?.hasSuffix("/\(key)/redirect") == true)
        #expect(clients[1].integerAttributes["http.response.status_code"] == 200)
        #expect(clients[1].integerAttributes["http.request.resend_count"] == 1)
        #expect(clients[1].attributes["url.full"]?.hasSuffix("/\(key)/ok") == true)
        #expect(try await TracingServers.log(key).map(\.parent_span_id) == clients.map(\.spanID))
    }

    @Test("A cache hit is a run span with the cache status and no client span")
    func cacheHit() async throws {
        let spans = SpanCollector()
        let server = try tracedServer(exporter: spans) { $0.cache = DataCache() }
        let key = key()
        _ = try await TracedGet(server: server, path: "\(key)/cache").download()
        let hit = try await TracedGet(server: server, path: "\(key)/cache").download()
        #expect(hit.cacheStatus == .hit)

        let runs = spans.runSpans
        try #require(runs.count == 2)
        #expect(runs[0].attributes["convey.cache.status"] == "network")
        #expect(runs[1].attributes["convey.cache.status"] == "hit")
        #expect(runs[1].integerAttributes["http.response.status_code"] == 200)
        #expect(spans.clientSpans.count == 1)
        #expect(spans.clientSpans.first?.parentSpanID == runs[0].spanID)
        #expect(try await TracingServers.log(key).count == 1)
    }

    @Test("A timeout: error.type is the ConveyError case, the spans in error")
    func timeout() async throws {
        let spans = SpanCollector()
        let server = try tracedServer(exporter: spans)
        let key = key()
        var configuration = TaskConfiguration()
        configuration.timeout = .milliseconds(300)
        let task = TracedGet(server: server, path: "\(key)/slow", configuration: configuration)
        await #expect(throws: ConveyError.self) { try await task.download() }

        let client = try #require(spans.clientSpans.first)
        let run = try #require(spans.runSpans.first)
        #expect(client.attributes["error.type"] == "attemptTimedOut")
        #expect(client.isError)
        #expect(client.integerAttributes["http.response.status_code"] == nil)
        #expect(client.statusMessage?.contains("Timed out") == true)
        #expect(run.attributes["error.type"] == "attemptTimedOut")
        #expect(run.isError)
    }

    @Test("A cancellation is marked as such on both spans")
    func cancellation() async throws {
        let spans = SpanCollector()
        let server = try tracedServer(exporter: spans)
        let key = key()
        let running = Task { try await TracedGet(server: server, path: "\(key)/slow").download() }
        try await waitUntil("the request reached the server") { (try? await TracingServers.log(key).count) == 1 }
        running.cancel()
        await #expect(throws: ConveyError.cancelled) { try await running.value }

        let client = try #require(spans.clientSpans.first)
        let run = try #require(spans.runSpans.first)
        #expect(client.attributes["error.type"] == "cancelled")
        #expect(client.isError)
        #expect(run.attributes["error.type"] == "cancelled")
        #expect(run.statusMessage == "Cancelled")
    }

    @Test("A run cancelled by its tag keeps the client span of the request that was on the wire")
    func cancellationByTag() async throws {
        let spans = SpanCollector()
        let server = try tracedServer(exporter: spans)
        let key = key()
        let tag = "traced-\(key)"
        struct Tagged: ServerTask {
            let server: ConveyServer
            let path: String
            let tag: String
            var sessionTag: String? { tag }
        }
        let running = Task { try await Tagged(server: server, path: "\(key)/slow", tag: tag).download() }
        try await waitUntil("the request reached the server") { (try? await TracingServers.log(key).count) == 1 }
        #expect(ConveySession.cancel(sessionWithTag: tag) == 1)
        await #expect(throws: ConveyError.cancelled) { try await running.value }

        let client = try #require(spans.clientSpans.first)
        let run = try #require(spans.runSpans.first)
        #expect(spans.clientSpans.count == 1)
        #expect(client.parent == run.span)
        #expect(client.attributes["error.type"] == "cancelled")
        #expect(run.attributes["error.type"] == "cancelled")
    }

    @Test("A stream's client span ends when its body ends, with what the transfer cost")
    func streamSpanEndsWithTheBody() async throws {
        let spans = SpanCollector()
        let server = try tracedServer(exporter: spans)
        // Streams need curl on Linux: FoundationNetworking cannot pause a transfer.
        server.transport = CurlTransport()
        let response = try await TracedGet(server: server, path: "\(key())/ok").stream()
        #expect(spans.spans.isEmpty)
        var body = Data()
        for try await chunk in response.payload { body.append(chunk) }
        #expect(!body.isEmpty)
        let client = try #require(spans.clientSpans.first)
        #expect(spans.runSpans.count == 1)
        #expect(client.events.contains { $0.name == "convey.transfer_done" })
    }

    @Test("An origin left out receives no trace headers, even ones the task set; a listed one does")
    func originsLeftOut() async throws {
        let other = try TracingServers.tracedOtherOrigin()
        for listed in [false, true] {
            let server = try tracedServer(exporter: SpanCollector()) {
                $0.tracing?.propagationOrigins = listed ? [other] : []
            }
            let key = key()
            let context = try #require(TraceContext(traceparent: TraceContextTests.valid, tracestate: "a=b"))
            let task = TracedGet(server: server, path: "\(key)/redirect-to", queryParameters: ["url": other.appending(path: "\(key)/ok").absoluteString],
                                 extraHeaders: [Header(name: "tracestate", value: "own=1")])
            _ = try await TraceContext.$current.withValue(context) { try await task.download() }

            let seen = try await TracingServers.log(key)
            try #require(seen.count == 2)
            #expect(seen[0].traceparent != nil)
            #expect(seen[0].tracestate == "a=b")
            #expect((seen[1].traceparent != nil) == listed)
            #expect((seen[1].tracestate != nil) == listed)
        }
    }

    @Test("Tracing off: nothing is added, and a task's own traceparent goes as it is")
    func tracingOff() async throws {
        let server = ConveyServer(remote: try TracingServers.traced(), configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        let key = key()
        let own = "00-11111111111111111111111111111111-2222222222222222-01"
        _ = try await TraceContext.$current.withValue(TraceContext(traceparent: TraceContextTests.valid)) {
            try await TracedGet(server: server, path: "\(key)/ok").download()
        }
        _ = try await TracedGet(server: server, path: "\(key)/ok", extraHeaders: [Header(name: "traceparent", value: own)]).download()
        let seen = try await TracingServers.log(key)
        #expect(seen.map(\.traceparent) == [nil, own])
    }

    @Test("Context only, without an exporter: every request carries the trace, no span is made")
    func contextOnly() async throws {
        let server = try tracedServer(exporter: nil)
        let key = key()
        _ = try await TraceContext.$current.withValue(TraceContext(traceparent: TraceContextTests.valid)) {
            try await TracedGet(server: server, path: "\(key)/redirect").download()
        }
        let seen = try await TracingServers.log(key)
        #expect(seen.map(\.remote_trace_id) == ["0af7651916cd43dd8448eb211c80319c", "0af7651916cd43dd8448eb211c80319c"])
        #expect(Set(seen.compactMap(\.parent_span_id)).count == 2)
    }
}
