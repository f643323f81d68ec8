import Foundation

/// Measurements added up per instrument and attribute set, as OpenTelemetry's metrics SDK
/// specification says, for the built-in exporter: explicit bucket histograms (count, sum, minimum,
/// maximum, one exemplar per bucket) and sums, cumulative or delta.
///
/// Built for the run's hot path: the attribute set is a small struct hashed as the key of its
/// series, every instrument is kept under one lock, and a measurement for a series that exists
/// allocates nothing. Memory is bounded whatever the attributes: each instrument keeps at most
/// `cardinalityLimit` series, the last being the overflow series (`otel.metric.overflow=true`)
/// that every measurement of a new attribute set goes to once the others are taken.
final class MetricAggregator: Sendable {
    let temporality: OTLPExporter.Temporality
    /// The most series an instrument keeps, the overflow series included.
    let cardinalityLimit: Int
    /// Nanoseconds since 1970, for exemplars and the times of data points.
    private let clock: @Sendable () -> UInt64
    private let state: InlineLocked<State>

    /// The specification's default cardinality limit.
    static let defaultCardinalityLimit = 2000

    private struct State: Sendable {
        var requests = MetricStream<RequestPoint>()
        var activeRequests = MetricStream<Int64>()
        var openConnections = MetricStream<Int64>()
        var connectionDurations = MetricStream<Histogram>()
        var cacheRequests = MetricStream<Int64>()
        /// When the current delta interval began: the previous collection, or the aggregator's start.
        var intervalStart: UInt64
        var hasMeasurements = false
        var stopped = false
    }

    init(temporality: OTLPExporter.Temporality, cardinalityLimit: Int = MetricAggregator.defaultCardinalityLimit,
         clock: @escaping @Sendable () -> UInt64 = MetricAggregator.wallClock) {
        self.temporality = temporality
        self.cardinalityLimit = max(1, cardinalityLimit)
        self.clock = clock
        state = InlineLocked(State(intervalStart: clock()))
    }

    /// The time now, in nanoseconds since 1970.
    @Sendable static func wallClock() -> UInt64 {
        let seconds = Date().timeIntervalSince1970
        return seconds > 0 ? UInt64(seconds * 1e9) : 0
    }

    /// Records a request on the wire: its duration, and its bodies' sizes when known, in one
    /// series of `attributes`. Returns whether it was the aggregator's first measurement.
    @discardableResult
    func recordRequest(_ attributes: MetricAttributes, seconds: Double?, requestBodySize: Int?, responseBodySize: Int?,
                       exemplar: MetricExemplar?) -> Bool {
        let limit = cardinalityLimit
        return update { state, time in
            state.requests.update(attributes, limit: limit, time: time, make: { RequestPoint() }) { point in
                if let seconds { point.duration.record(seconds, boundaries: MetricInstrument.requestDurationBoundaries, exemplar: exemplar, time: time) }
                if let requestBodySize {
                    point.requestBody.record(Double(requestBodySize), boundaries: MetricInstrument.defaultBoundaries, exemplar: exemplar, time: time)
                }
                if let responseBodySize {
                    point.responseBody.record(Double(responseBodySize), boundaries: MetricInstrument.defaultBoundaries, exemplar: exemplar, time: time)
                }
            }
        }
    }

    /// Adds `delta` to `http.client.active_requests` for `attributes`.
    @discardableResult
    func addActiveRequests(_ attributes: MetricAttributes, _ delta: Int64) -> Bool {
        let limit = cardinalityLimit
        return update { state, time in
            state.activeRequests.update(attributes, limit: limit, time: time, make: { 0 }) { $0 += delta }
        }
    }

    /// Adds `delta` to `http.client.open_connections` for `attributes`.
    @discardableResult
    func addOpenConnections(_ attributes: MetricAttributes, _ delta: Int64) -> Bool {
        let limit = cardinalityLimit
        return update { state, time in
            state.openConnections.update(attributes, limit: limit, time: time, make: { 0 }) { $0 += delta }
        }
    }

    /// Records how long a connection was open.
    @discardableResult
    func recordConnectionDuration(_ attributes: MetricAttributes, seconds: Double) -> Bool {
        let limit = cardinalityLimit
        return update { state, time in
            state.connectionDurations.update(attributes, limit: limit, time: time, make: { Histogram(boundaries: MetricInstrument.connectionDurationBoundaries) }) {
                $0.record(seconds, boundaries: MetricInstrument.connectionDurationBoundaries, exemplar: nil, time: time)
            }
        }
    }

    /// Adds `count` to `convey.cache.requests` for `attributes`.
    @discardableResult
    func countCacheRequests(_ attributes: MetricAttributes, _ count: Int64 = 1) -> Bool {
        let limit = cardinalityLimit
        return update { state, time in
            state.cacheRequests.update(attributes, limit: limit, time: time, make: { 0 }) { $0 += count }
        }
    }

    /// Adds one measurement, whichever its instrument.
    @discardableResult
    func record(_ measurement: MetricMeasurement) -> Bool {
        let attributes = measurement.attributeSet
        let value = measurement.value
        switch measurement.instrument {
        case .requestDuration:
            return recordRequest(attributes, seconds: value, requestBodySize: nil, responseBodySize: nil, exemplar: measurement.exemplar)
        case .requestBodySize:
            return recordRequest(attributes, seconds: nil, requestBodySize: Int(Self.integer(value)), responseBodySize: nil, exemplar: measurement.exemplar)
        case .responseBodySize:
            return recordRequest(attributes, seconds: nil, requestBodySize: nil, responseBodySize: Int(Self.integer(value)), exemplar: measurement.exemplar)
        case .activeRequests: return addActiveRequests(attributes, Self.integer(value))
        case .openConnections: return addOpenConnections(attributes, Self.integer(value))
        case .connectionDuration: return recordConnectionDuration(attributes, seconds: value)
        case .cacheRequests: return countCacheRequests(attributes, Self.integer(value))
        }
    }

    /// `value` as a whole number, 0 when it is not finite.
    private static func integer(_ value: Double) -> Int64 {
        guard value.isFinite else { return 0 }
        return Int64(min(max(value.rounded(), -9.0e18), 9.0e18))
    }

    /// Runs `change` on the state holding the lock, unless stopped; whether it was the first measurement.
    private func update(_ change: (inout State, () -> UInt64) -> Void) -> Bool {
        let clock = clock
        return state.withLock { state in
            guard !state.stopped else { return false }
            change(&state, clock)
            let first = !state.hasMeasurements
            state.hasMeasurements = true
            return first
        }
    }

    /// Every series as it stands, and for delta temporality, a new interval begun: counters and
    /// histograms start again from nothing (up-down counters stay cumulative). `nil` before the
    /// first measurement.
    func collect() -> MetricsSnapshot? {
        let now = clock()
        return state.withLock { state -> MetricsSnapshot? in
            guard state.hasMeasurements else { return nil }
            let snapshot = MetricsSnapshot(time: now, intervalStart: state.intervalStart, temporality: temporality,
                                           requests: state.requests.series, activeRequests: state.activeRequests.series,
                                           openConnections: state.openConnections.series,
                                           connectionDurations: state.connectionDurations.series, cacheRequests: state.cacheRequests.series)
            if temporality == .delta {
                state.requests = MetricStream()
                state.connectionDurations = MetricStream()
                state.cacheRequests = MetricStream()
            }
            state.intervalStart = now
            return snapshot
        }
    }

    /// Stops taking measurements (after a shutdown).
    func stop() {
        state.withLock { $0.stopped = true }
    }
}

/// The series of one instrument: each attribute set's, at most `limit` of them, the last the overflow series.
struct MetricStream<Point: Sendable>: Sendable {
    fileprivate(set) var index: [MetricAttributes: Int] = [:]
    fileprivate(set) var series: [MetricSeries<Point>] = []

    /// Changes the point of `attributes`, made with `make` if it has none, in the overflow series
    /// once there is no room for another.
    mutating func update(_ attributes: MetricAttributes, limit: Int, time: () -> UInt64, make: () -> Point, _ change: (inout Point) -> Void) {
        let position: Int
        if let found = index[attributes] {
            position = found
        } else {
            let key = series.count < limit - 1 ? attributes : MetricAttributes.overflow
            if let found = index[key] {
                position = found
            } else {
                position = series.count
                series.append(MetricSeries(attributes: key, start: time(), point: make()))
                index[key] = position
            }
        }
        change(&series[position].point)
    }
}

/// One attribute set's data point, and when its sequence began.
struct MetricSeries<Point: Sendable>: Sendable {
    let attributes: MetricAttributes
    /// Nanoseconds since 1970: when the series was made (the start of its cumulative sequence).
    let start: UInt64
    var point: Point
}

/// A request's three histograms, which share its attribute set.
struct RequestPoint: Sendable {
    var duration = Histogram(boundaries: MetricInstrument.requestDurationBoundaries)
    var requestBody = Histogram(boundaries: MetricInstrument.defaultBoundaries)
    var responseBody = Histogram(boundaries: MetricInstrument.defaultBoundaries)
}

/// An explicit bucket histogram's data point: count, sum, minimum, maximum, a count per bucket
/// (upper bounds inclusive, the last bucket unbounded) and the last exemplar of each bucket.
struct Histogram: Sendable {
    var count: UInt64 = 0
    var sum: Double = 0
    var minimum = Double.infinity
    var maximum = -Double.infinity
    var buckets: [UInt64]
    /// One per bucket, made with the first exemplar.
    var exemplars: [Exemplar?] = []

    /// A measurement kept as an example of its bucket, with the trace it was made in.
    struct Exemplar: Sendable, Hashable {
        let value: Double
        let time: UInt64
        let trace: TraceID
        let span: UInt64
    }

    init(boundaries: [Double]) {
        buckets = Array(repeating: 0, count: boundaries.count + 1)
    }

    /// Adds `value`; with `exemplar`, it becomes its bucket's example.
    mutating func record(_ value: Double, boundaries: [Double], exemplar: MetricExemplar?, time: () -> UInt64) {
        guard value.isFinite else { return }
        let bucket = Self.bucket(of: value, in: boundaries)
        count += 1
        sum += value
        minimum = Swift.min(minimum, value)
        maximum = Swift.max(maximum, value)
        buckets[bucket] += 1
        guard let exemplar else { return }
        if exemplars.isEmpty { exemplars = Array(repeating: nil, count: buckets.count) }
        exemplars[bucket] = Exemplar(value: value, time: time(), trace: exemplar.trace, span: exemplar.span)
    }

    /// The bucket of `value`: the first whose upper bound is at least `value`, else the last.
    static func bucket(of value: Double, in boundaries: [Double]) -> Int {
        var low = 0
        var high = boundaries.count
        while low < high {
            let middle = (low + high) / 2
            if value <= boundaries[middle] { high = middle } else { low = middle + 1 }
        }
        return low
    }
}

/// Every series of every instrument at one collection.
struct MetricsSnapshot: Sendable {
    /// When it was taken, in nanoseconds since 1970.
    let time: UInt64
    /// When the interval it closes began: a delta point's start.
    let intervalStart: UInt64
    let temporality: OTLPExporter.Temporality
    let requests: [MetricSeries<RequestPoint>]
    let activeRequests: [MetricSeries<Int64>]
    let openConnections: [MetricSeries<Int64>]
    let connectionDurations: [MetricSeries<Histogram>]
    let cacheRequests: [MetricSeries<Int64>]

    /// How many data points an export of it carries.
    var pointCount: Int {
        requests.reduce(0) { total, series in
            total + (series.point.duration.count > 0 ? 1 : 0) + (series.point.requestBody.count > 0 ? 1 : 0)
                + (series.point.responseBody.count > 0 ? 1 : 0)
        } + activeRequests.count + openConnections.count + connectionDurations.count + cacheRequests.count
    }
}
