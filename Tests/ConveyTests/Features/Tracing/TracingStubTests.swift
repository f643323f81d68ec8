import Foundation
import Testing
@_spi(Transport) @testable import Convey

/// Tracing without the wire: a stub transport records what is sent.
@Suite("Tracing, stubbed")
@ConveyActor
struct TracingStubTests {
    /// Starts a run of another task from inside the run, as a hook or a step of the app's does.
    private struct NestedRun: Interceptor {
        let inner: ConveyServer

        func intercept(_ request: OutgoingRequest,
                       next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
            _ = try await TracedGet(server: inner, path: "token").download()
            return try await next(request)
        }
    }

    @Test("Inside a traced run, TraceContext.current is the run's span: a run started there is its child")
    func nestedRunIsAChild() async throws {
        let spans = SpanCollector()
        let seen = RequestLog()
        let inner = try stubServer(.answering(seen: seen)) { $0.tracing = TracingConfiguration(exporter: spans) }
        let outer = try stubServer(.answering(seen: seen)) {
            $0.tracing = TracingConfiguration(exporter: spans)
            $0.interceptors = [NestedRun(inner: inner)]
        }
        _ = try await TracedGet(server: outer, path: "items").download()

        let runs = spans.runSpans
        try #require(runs.count == 2)
        let (innerRun, outerRun) = (runs[0], runs[1])
        #expect(innerRun.parentSpanID == outerRun.spanID)
        #expect(innerRun.traceID == outerRun.traceID)
        #expect(outerRun.parentSpanID == nil)
        let sent = seen.requests.compactMap { $0.request.fields["traceparent"] }
        #expect(sent.count == 2)
        #expect(sent.allSatisfy { $0.contains(outerRun.traceID) })
    }

    @Test("The app's exchange steps run before tracing's, which is nearest the wire: each request they send is its own span")
    func exchangeStepsSendingTwice() async throws {
        struct SendTwice: Interceptor {
            func intercept(_ request: OutgoingRequest,
                           next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
                _ = try await next(request)
                return try await next(request)
            }
        }
        let spans = SpanCollector()
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen)) {
            $0.tracing = TracingConfiguration(exporter: spans)
            $0.exchangeInterceptors = [SendTwice()]
        }
        _ = try await TracedGet(server: server, path: "items").download()

        let clients = spans.clientSpans
        try #require(clients.count == 2)
        #expect(clients.map { $0.integerAttributes["http.request.resend_count"] } == [nil, 1])
        let sent = seen.requests.compactMap { $0.request.fields["traceparent"] }
        #expect(sent == clients.map { "00-\($0.traceID)-\($0.spanID)-01" })
    }

    @Test("A hostile tracestate of 40 members passed through TraceContext is never sent on nor stored in a span")
    func hostileTraceStateIsDropped() async throws {
        let spans = SpanCollector()
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen)) { $0.tracing = TracingConfiguration(exporter: spans) }
        let hostile = (1...40).map { "m\($0)=\(String(repeating: "x", count: 8))" }.joined(separator: ",")
        let context = try #require(TraceContext(traceparent: TraceContextTests.valid, tracestate: hostile))
        _ = try await TraceContext.$current.withValue(context) { try await TracedGet(server: server, path: "items").download() }

        let sent = try #require(seen.last)
        #expect(sent.request.fields["traceparent"]?.contains("0af7651916cd43dd8448eb211c80319c") == true)
        #expect(sent.request.fields["tracestate"] == nil)
        try #require(spans.spans.count == 2)
        #expect(spans.spans.allSatisfy { $0.traceState == nil && $0.traceID == "0af7651916cd43dd8448eb211c80319c" })
    }

    @Test("A run that cannot start makes no span and sends nothing")
    func runThatCannotStart() async throws {
        let spans = SpanCollector()
        let server = try stubServer(.answering()) { $0.tracing = TracingConfiguration(exporter: spans) }
        server.remote = nil
        await #expect(throws: ConveyError.self) { try await TracedGet(server: server, path: "items").download() }
        #expect(spans.spans.isEmpty)
    }

    @Test("OTLP JSON: ids in lowercase hex, kinds and status as integers, text escaped")
    func otlpJSON() throws {
        let trace = TraceID(high: 0x0af7_6519_16cd_43dd, low: 0x8448_eb21_1c80_319c)
        let span = TraceSpan(trace: trace, span: 0xb7ad_6b71_6920_3331, parent: 0x00f0_67aa_0ba9_02b7, name: "GET", isClient: true,
                             start: Date(timeIntervalSince1970: 1), end: Date(timeIntervalSince1970: 2),
                             attributes: ["url.full": "http://h/\"quoted\"\n"], integerAttributes: ["server.port": 80],
                             isError: true, statusMessage: "Timed out", traceState: "a=b")
        let body = OTLPJSON.body([span], serviceName: "app")
        let document = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        let resourceSpans = try #require(document["resourceSpans"] as? [[String: Any]])
        let scopeSpans = try #require(resourceSpans.first?["scopeSpans"] as? [[String: Any]])
        let spans = try #require(scopeSpans.first?["spans"] as? [[String: Any]])
        let encoded = try #require(spans.first)
        #expect(encoded["traceId"] as? String == "0af7651916cd43dd8448eb211c80319c")
        #expect(encoded["spanId"] as? String == "b7ad6b7169203331")
        #expect(encoded["parentSpanId"] as? String == "00f067aa0ba902b7")
        #expect(encoded["kind"] as? Int == 3)
        #expect(encoded["startTimeUnixNano"] as? String == "1000000000")
        #expect(encoded["traceState"] as? String == "a=b")
        #expect((encoded["status"] as? [String: Any])?["code"] as? Int == 2)
        let attributes = try #require(encoded["attributes"] as? [[String: Any]])
        let url = try #require(attributes.first { $0["key"] as? String == "url.full" })
        #expect((url["value"] as? [String: Any])?["stringValue"] as? String == "http://h/\"quoted\"\n")
        let port = try #require(attributes.first { $0["key"] as? String == "server.port" })
        #expect((port["value"] as? [String: Any])?["intValue"] as? String == "80")
    }
}
