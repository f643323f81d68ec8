import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The harness's `--metrics` table, fed measurements as runs record them.
@Suite("Metrics summary table")
struct MetricsSummaryTests {
    @Test("One row per host and status, hosts and statuses in order, with the count and the nearest-rank p50 and p99")
    func rowsPerHostAndStatus() throws {
        let summary = MetricsSummary()
        let recorder = MetricsRecorder(exporter: summary)
        // 100 successes of 1 ms to 100 ms: p50 is the 50th, p99 the 99th.
        for milliseconds in (1...100).reversed() {
            WireRequest.answered("http://127.0.0.1:8080/get", 200, seconds: Double(milliseconds) / 1000).record(on: recorder)
        }
        WireRequest.answered("http://127.0.0.1:8080/status/503", 503, seconds: 0.0031).record(on: recorder)
        WireRequest.failed("https://api.example.com/slow", ConveyError.attemptTimedOut(limit: .seconds(2), url: nil), seconds: 2).record(on: recorder)
        WireRequest.answered("https://[::1]:8443/", 404, seconds: 0.25).record(on: recorder)
        var cache = MetricAttributes(method: .get, url: try #require(URL(string: "https://api.example.com/")))
        cache.cacheStatus = .hit
        recorder.cacheRequest(cache)

        #expect(summary.lines == [
            "host             status           count       p50       p99",
            "127.0.0.1:8080   200                100   50.0 ms   99.0 ms",
            "127.0.0.1:8080   503                  1    3.1 ms    3.1 ms",
            "[::1]:8443       404                  1  250.0 ms  250.0 ms",
            "api.example.com  attemptTimedOut      1    2.00 s    2.00 s",
        ])
    }

    @Test("Nothing measured: one line saying so")
    func empty() {
        #expect(MetricsSummary().lines == ["No request was measured."])
    }

    @Test("Nearest-rank percentiles")
    func percentiles() {
        #expect(MetricsSummary.percentile(50, of: [1]) == 1)
        #expect(MetricsSummary.percentile(50, of: [1, 2]) == 1)
        #expect(MetricsSummary.percentile(99, of: [1, 2]) == 2)
        #expect(MetricsSummary.percentile(99, of: Array(1...1000).map(Double.init)) == 990)
        #expect(MetricsSummary.percentile(99, of: []) == nil)
    }
}
