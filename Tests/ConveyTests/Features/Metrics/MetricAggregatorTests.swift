import Foundation
import Testing
@_spi(Transport) @testable import Convey

/// The built-in exporter's aggregation: buckets, the cardinality limit and its overflow series,
/// cumulative and delta temporality, exemplars, and counts that add up under concurrency.
@Suite("Metric aggregation")
struct MetricAggregatorTests {
    /// A clock moved by hand, in nanoseconds since 1970.
    final class ManualClock: Sendable {
        private let now = Locked<UInt64>(1_700_000_000_000_000_000)
        func advance(_ nanoseconds: UInt64) { now.withLock { $0 += nanoseconds } }
        var read: @Sendable () -> UInt64 { { [now] in now.value } }
    }

    private func attributes(host: String = "api.example.com", status: Int = 200) throws -> MetricAttributes {
        var attributes = MetricAttributes(method: .get, url: try #require(URL(string: "https://\(host)/items")))
        attributes.add(status: status, protocolVersion: "HTTP/1.1")
        return attributes
    }

    private func points(_ aggregator: MetricAggregator) throws -> [ExportedPoint] {
        try ExportedPoint.parse(OTLPMetricsJSON.body(try #require(aggregator.collect()), serviceName: "convey-tests"))
    }

    @Test("A value on a boundary goes to that boundary's bucket; above the last, to the last bucket")
    func bucketBoundaries() throws {
        let aggregator = MetricAggregator(temporality: .cumulative)
        let key = try attributes()
        for seconds in [0.005, 0.0051, 0.0, 10, 10.5, 0.1] {
            aggregator.recordRequest(key, seconds: seconds, requestBodySize: nil, responseBodySize: nil, exemplar: nil)
        }
        let duration = try #require(try points(aggregator).named("http.client.request.duration").first)
        let buckets = try #require(duration.buckets)
        #expect(buckets[0] == 2)   // 0 and 0.005: (-inf, 0.005]
        #expect(buckets[1] == 1)   // 0.0051: (0.005, 0.01]
        #expect(buckets[5] == 1)   // 0.1: (0.075, 0.1]
        #expect(buckets[13] == 1)  // 10: (7.5, 10]
        #expect(buckets[14] == 1)  // 10.5: (10, +inf)
        #expect(duration.count == 6)
        #expect(duration.minimum == 0)
        #expect(duration.maximum == 10.5)
        #expect(abs((duration.sum ?? 0) - 20.6101) < 1e-9)
    }

    @Test("The cardinality limit: at most that many series, the last one the overflow series, and no measurement lost")
    func cardinalityLimit() throws {
        let aggregator = MetricAggregator(temporality: .cumulative, cardinalityLimit: 5)
        for host in 0..<10 {
            let key = try attributes(host: "host\(host).example.com")
            aggregator.recordRequest(key, seconds: 0.01, requestBodySize: nil, responseBodySize: nil, exemplar: nil)
            aggregator.recordRequest(key, seconds: 0.01, requestBodySize: nil, responseBodySize: nil, exemplar: nil)
            aggregator.addActiveRequests(key.activeRequest, 1)
        }
        let durations = try points(aggregator).named("http.client.request.duration")
        #expect(durations.count == 5)
        let overflow = try #require(durations.first { $0.attributes["otel.metric.overflow"] == "true" })
        #expect(overflow.attributes == ["otel.metric.overflow": "true"])
        #expect(overflow.count == 12)
        #expect(durations.compactMap(\.count).reduce(0, +) == 20)
        // The first four attribute sets kept their own series; later ones went to the overflow.
        #expect(Set(durations.compactMap { $0.attributes["server.address"] }) == Set((0..<4).map { "host\($0).example.com" }))
        let active = try points(aggregator).named("http.client.active_requests")
        #expect(active.count == 5)
        #expect(active.compactMap(\.value).reduce(0, +) == 10)
    }

    @Test("Delta temporality frees the series each collection: new attribute sets get room again")
    func deltaFreesSeries() throws {
        let aggregator = MetricAggregator(temporality: .delta, cardinalityLimit: 3)
        for host in 0..<5 {
            aggregator.recordRequest(try attributes(host: "a\(host)"), seconds: 0.01, requestBodySize: nil, responseBodySize: nil, exemplar: nil)
        }
        #expect(try points(aggregator).named("http.client.request.duration").contains { $0.attributes["otel.metric.overflow"] == "true" })
        aggregator.recordRequest(try attributes(host: "b"), seconds: 0.01, requestBodySize: nil, responseBodySize: nil, exemplar: nil)
        let next = try points(aggregator).named("http.client.request.duration")
        #expect(next.map { $0.attributes["server.address"] } == ["b"])
    }

    @Test("Cumulative: each collection carries the totals since the series began, with the same start")
    func cumulative() throws {
        let clock = ManualClock()
        let aggregator = MetricAggregator(temporality: .cumulative, clock: clock.read)
        let key = try attributes()
        var cache = key.activeRequest
        cache.cacheStatus = .hit
        for _ in 0..<2 {
            aggregator.recordRequest(key, seconds: 0.2, requestBodySize: nil, responseBodySize: nil, exemplar: nil)
            aggregator.countCacheRequests(cache)
        }
        clock.advance(1_000)
        let first = try points(aggregator)
        clock.advance(1_000)
        for _ in 0..<3 {
            aggregator.recordRequest(key, seconds: 0.2, requestBodySize: nil, responseBodySize: nil, exemplar: nil)
            aggregator.countCacheRequests(cache)
        }
        let second = try points(aggregator)
        let (duration1, duration2) = (try #require(first.named("http.client.request.duration").first), try #require(second.named("http.client.request.duration").first))
        #expect(duration1.count == 2)
        #expect(duration2.count == 5)
        #expect(duration1.start == duration2.start)
        #expect(duration2.time == duration1.time + 1_000)
        #expect(duration2.temporality == 2)
        let cache2 = try #require(second.named("convey.cache.requests").first)
        #expect(cache2.value == 5)
        #expect(cache2.temporality == 2)
    }

    @Test("Delta: each collection carries what happened since the previous one, starting where it ended; up-down counters stay cumulative")
    func delta() throws {
        let clock = ManualClock()
        let aggregator = MetricAggregator(temporality: .delta, clock: clock.read)
        let key = try attributes()
        var cache = key.activeRequest
        cache.cacheStatus = .revalidated
        for _ in 0..<2 {
            aggregator.addActiveRequests(key.activeRequest, 1)
            aggregator.recordRequest(key, seconds: 0.2, requestBodySize: nil, responseBodySize: nil, exemplar: nil)
            aggregator.countCacheRequests(cache)
        }
        clock.advance(5_000)
        let first = try points(aggregator)
        clock.advance(7_000)
        for _ in 0..<3 {
            aggregator.recordRequest(key, seconds: 0.2, requestBodySize: nil, responseBodySize: nil, exemplar: nil)
            aggregator.countCacheRequests(cache)
        }
        aggregator.addActiveRequests(key.activeRequest, -1)
        let second = try points(aggregator)

        let (duration1, duration2) = (try #require(first.named("http.client.request.duration").first), try #require(second.named("http.client.request.duration").first))
        #expect(duration1.count == 2)
        #expect(duration2.count == 3)
        #expect(duration2.temporality == 1)
        #expect(duration2.start == duration1.time)
        #expect(duration2.time == duration1.time + 7_000)
        let cache2 = try #require(second.named("convey.cache.requests").first)
        #expect(cache2.value == 3)
        #expect(cache2.temporality == 1)
        #expect(cache2.isMonotonic == true)
        let active = try #require(second.named("http.client.active_requests").first)
        #expect(active.value == 1)
        #expect(active.temporality == 2)
        #expect(active.isMonotonic == false)
        // Nothing recorded since: a delta collection has no duration point.
        #expect(try points(aggregator).named("http.client.request.duration").isEmpty)
    }

    @Test("Exemplars carry the trace and span of the last measurement in each bucket")
    func exemplars() throws {
        let aggregator = MetricAggregator(temporality: .cumulative)
        let key = try attributes()
        let trace = TraceID(high: 0x0af7_6519_16cd_43dd, low: 0x8448_eb21_1c80_319c)
        aggregator.recordRequest(key, seconds: 0.003, requestBodySize: nil, responseBodySize: 20,
                                 exemplar: MetricExemplar(trace: trace, span: 0x1111_1111_1111_1111))
        aggregator.recordRequest(key, seconds: 0.004, requestBodySize: nil, responseBodySize: nil,
                                 exemplar: MetricExemplar(trace: trace, span: 0xb7ad_6b71_6920_3331))
        aggregator.recordRequest(key, seconds: 2, requestBodySize: nil, responseBodySize: nil, exemplar: nil)
        let points = try points(aggregator)
        let duration = try #require(points.named("http.client.request.duration").first)
        try #require(duration.exemplars.count == 1)
        #expect(duration.exemplars[0].traceId == "0af7651916cd43dd8448eb211c80319c")
        #expect(duration.exemplars[0].spanId == "b7ad6b7169203331")
        #expect(duration.exemplars[0].value == 0.004)
        let body = try #require(points.named("http.client.response.body.size").first)
        #expect(body.exemplars.map(\.spanId) == ["1111111111111111"])
    }

    @Test("10,000 requests from 100 tasks: every count adds up, and nothing is left in flight")
    func concurrentCountsAddUp() async throws {
        let exporter = try quietExporter()
        let log = MeasurementLog()
        let recorders = [MetricsRecorder(exporter: exporter), MetricsRecorder(exporter: log)]
        let statuses = [200, 201, 404, 503]
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<100 {
                group.addTask {
                    for index in 0..<100 {
                        let request = WireRequest.answered("https://host\(task % 7).example.com/items/\(index)", statuses[(task + index) % 4],
                                                           sent: index, received: 2 * index)
                        for recorder in recorders { request.record(on: recorder) }
                        if index % 10 == 0 {
                            var cache = MetricAttributes(method: .get, url: request.url)
                            cache.cacheStatus = .hit
                            for recorder in recorders { recorder.cacheRequest(cache) }
                        }
                    }
                }
            }
        }
        let points = try ExportedPoint.parse(OTLPMetricsJSON.body(try #require(exporter.metrics.aggregator.collect()), serviceName: "t"))
        let durations = points.named("http.client.request.duration")
        #expect(durations.count == 7 * 4)
        #expect(durations.compactMap(\.count).reduce(0, +) == 10_000)
        #expect(durations.allSatisfy { ($0.buckets ?? []).reduce(0, +) == $0.count })
        for status in statuses {
            let counts: [UInt64] = durations.filter { $0.attributes["http.response.status_code"] == String(status) }.compactMap(\.count)
            #expect(counts.reduce(0, +) == 2500)
        }
        let requestBytes: Double = points.named("http.client.request.body.size").compactMap(\.sum).reduce(0, +)
        let responseBytes: Double = points.named("http.client.response.body.size").compactMap(\.sum).reduce(0, +)
        #expect(requestBytes == 495_000)
        #expect(responseBytes == 990_000)
        #expect(points.named("http.client.active_requests").allSatisfy { $0.value == 0 })
        #expect(points.named("convey.cache.requests").compactMap(\.value).reduce(0, +) == 1000)
        #expect(log.named("http.client.request.duration").count == 10_000)
        #expect(log.named("http.client.active_requests").map(\.value).reduce(0, +) == 0)
        #expect(log.named("convey.cache.requests").count == 1000)
    }

    @Test("After a shutdown the aggregator takes no more measurements")
    func stopped() throws {
        let aggregator = MetricAggregator(temporality: .cumulative)
        #expect(aggregator.collect() == nil)
        aggregator.stop()
        aggregator.recordRequest(try attributes(), seconds: 1, requestBodySize: nil, responseBodySize: nil, exemplar: nil)
        #expect(aggregator.collect() == nil)
    }
}
