#if os(Linux) || os(macOS)
import Foundation
import Testing

/// `--spans`, `--traceparent` and `--otlp` on the built harness, against the server instrumented
/// with OpenTelemetry's Python SDK and the collector stand-in.
@Suite("Harness tracing", .wire)
struct HarnessTracingTests {
    private func key() -> String { "h-" + UUID().uuidString.prefix(12).lowercased() }

    @Test("--spans --traceparent: the run continues the trace and prints a bar per hop, with status and resend count")
    func spansWaterfall() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let base = try #require(TracingServers.tracedURL)
        let key = key()
        let run = try await HarnessProcess.run(["get", base.absoluteString + "/\(key)/redirect", "-L", "--spans", "--color", "never",
                                                "--traceparent", TraceContextTests.valid, "--no-record"], records: records.url)
        #expect(run.status == 0)
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("Spans  trace 0af7651916cd43dd8448eb211c80319c  parent b7ad6b7169203331") })
        let hops = lines.filter { $0.hasPrefix("    GET ") }
        try #require(hops.count == 2)
        #expect(hops[0].hasPrefix("    GET 302 "))
        #expect(hops[0].hasSuffix("/\(key)/redirect"))
        #expect(hops[1].hasPrefix("    GET 200  resend 1"))
        #expect(hops[1].hasSuffix("/\(key)/ok"))
        #expect(lines.contains("  ░ dns  ▒ connect  ▓ tls  █ wait  ▄ transfer  · other"))
        let seen = try await TracingServers.log(key)
        #expect(seen.map(\.trace_id) == ["0af7651916cd43dd8448eb211c80319c", "0af7651916cd43dd8448eb211c80319c"])
    }

    @Test("--traceparent with an invalid value: said on stderr, and a new trace is sent instead")
    func invalidTraceparent() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let base = try #require(TracingServers.tracedURL)
        let key = key()
        let invalid = "00-00000000000000000000000000000000-b7ad6b7169203331-01"
        let run = try await HarnessProcess.run(["get", base.absoluteString + "/\(key)/ok", "--traceparent", invalid, "--no-record"],
                                               records: records.url)
        #expect(run.status == 0)
        #expect(run.stderr.contains("is not a valid W3C traceparent"))
        let seen = try #require(try await TracingServers.log(key).first)
        #expect(seen.traceparent != nil)
        #expect(seen.traceparent != invalid)
        #expect(seen.remote_trace_id != "00000000000000000000000000000000")
    }

    @Test("--otlp: the run's spans reach the collector before the harness exits")
    func otlpExport() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let base = try #require(TracingServers.tracedURL)
        let key = key()
        let collector = try TracingServers.collector("ok", key: key)
        let run = try await HarnessProcess.run(["get", base.absoluteString + "/\(key)/ok", "--otlp", collector.absoluteString, "--no-record"],
                                               records: records.url)
        #expect(run.status == 0)
        let received = try await TracingServers.received(key)
        #expect(received.errors == [])
        #expect(received.spans.map(\.kind).sorted() == [1, 3])
        #expect(received.spans.allSatisfy { $0.service == "convey-harness" })
        let seen = try #require(try await TracingServers.log(key).first)
        #expect(received.spans.contains { $0.kind == 3 && $0.spanId == seen.parent_span_id && $0.traceId == seen.trace_id })
    }

    @Test("--otlp with something that is no http(s) URL is a usage error")
    func otlpUsage() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["get", "/get", "--otlp", "collector:4318"], records: records.url)
        #expect(run.status == 1)
        #expect(run.stderr.contains("--otlp: 'collector:4318' is not an http(s) URL of a collector"))
    }
}
#endif
