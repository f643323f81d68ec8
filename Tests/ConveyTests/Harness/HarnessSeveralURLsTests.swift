#if os(Linux) || os(macOS)
import Foundation
import Testing

/// Several URLs in one invocation, a URL without a command, `--retry-delay 0` and `--metrics`, as
/// a curl user types them; the embedded server answers unless a test says otherwise.
@Suite("Harness: several URLs, curl's way")
struct HarnessSeveralURLsTests {
    @Test("Several paths are sent in turn with the same options, each with its own output; the exit code is the last one's")
    func severalPaths() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let format = ["-s", "-o", "/dev/null", "-w", "%{http_code} %{url_effective}\\n"]
        let okThenMissing = try await HarnessProcess.run(["get", "/get", "/status/404", "/status/201"] + format + ["--no-record"],
                                                        records: records.url)
        #expect(okThenMissing.stdout == "200 http://embedded.invalid/get\n404 http://embedded.invalid/status/404\n201 http://embedded.invalid/status/201\n")
        #expect(okThenMissing.status == 0)
        let missingLast = try await HarnessProcess.run(["get", "/get", "/status/404"] + format + ["--no-record"], records: records.url)
        #expect(missingLast.stdout.hasSuffix("404 http://embedded.invalid/status/404\n"))
        #expect(missingLast.status == 2)
    }

    @Test("Several paths with -f: each failure said, the run goes on to the next")
    func severalWithFail() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["get", "/status/500", "/get", "-fsS", "-o", "/dev/null", "-w", "%{http_code}\\n", "--no-record"],
                                               records: records.url)
        #expect(run.stdout == "500\n200\n")
        #expect(run.stderr.contains("returned error: 500"))
        #expect(run.status == 0)
    }

    @Test("--retry-delay 0 is taken, as curl takes it: the retries go at once")
    func retryDelayZero() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["get", "/status/503", "--retry", "2", "--retry-delay", "0", "--echo", "minimum", "--no-record"],
                                               records: records.url)
        #expect(run.status == 3)
        #expect(run.stderr.contains("HTTP 503 Service Unavailable: retry 1 of 2 in 0.0 ms"))
        #expect(run.stderr.contains("HTTP 503 Service Unavailable: retry 2 of 2 in 0.0 ms"))
        #expect(!run.stderr.contains("is not a number of seconds"))
    }

    @Test("--metrics prints its table once, after the last run")
    func metricsTableAtTheEnd() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["get", "/get", "/status/404", "--metrics", "-o", "/dev/null", "--color", "never", "--no-record"],
                                               records: records.url)
        let lines = run.stderr.split(separator: "\n").map(String.init)
        let header = try #require(lines.lastIndex(of: "Metrics  http.client.request.duration"), "\(run.stderr)")
        #expect(lines.filter { $0 == "Metrics  http.client.request.duration" }.count == 1)
        #expect(header > (lines.lastIndex { $0.contains("/status/404") } ?? -1))
        // One row per host and status, each counting the requests the runs put on the wire.
        let rows = lines[(header + 2)...].map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.map { $0.count >= 3 ? "\($0[1]) \($0[2])" : "" } == ["200 1", "404 1"])
        #expect(run.status == 2)
    }

    @Test("A URL as the first argument means get", .wire)
    func urlFirstMeansGet() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let base = try TestServers.httpbin().urlString(forPath: "")
        let run = try await HarnessProcess.run([base + "/get", base + "/status/418", "-s", "-o", "/dev/null", "-w", "%{http_code}\\n", "--no-record"],
                                               records: records.url)
        #expect(run.stdout == "200\n418\n")
        #expect(!run.stderr.contains("unknown command"))
        #expect(run.status == 2)
    }

    @Test("--otlp with several URLs: every run's spans reach the collector, sent once before the harness exits", .wire)
    func otlpWithSeveralURLs() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let base = try #require(TracingServers.tracedURL)
        let key = "hs-" + UUID().uuidString.prefix(12).lowercased()
        let collector = try TracingServers.collector("ok", key: key)
        let run = try await HarnessProcess.run(["get", base.absoluteString + "/\(key)/ok", base.absoluteString + "/\(key)/redirect", "-L",
                                                "--otlp", collector.absoluteString, "-s", "-o", "/dev/null", "--no-record"], records: records.url)
        #expect(run.status == 0)
        let received = try await TracingServers.received(key)
        #expect(received.errors == [])
        #expect(received.spans.filter { $0.kind == 1 }.count == 2)
        #expect(received.spans.filter { $0.kind == 3 }.count == 3)
        #expect(Set(received.spans.map(\.traceId)).count == 2)
        #expect(received.spans.allSatisfy { $0.service == "convey-harness" })
    }
}
#endif
