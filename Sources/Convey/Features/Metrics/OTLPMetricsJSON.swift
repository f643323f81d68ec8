import Foundation

/// A collection of metrics as an OTLP/HTTP JSON request body (`ExportMetricsServiceRequest`, OTLP
/// 1.x): the resource and scope of the span batches, one metric per instrument with data points,
/// enums as integers, 64-bit integers as strings, and exemplars' ids as lowercase hex, as the
/// specification's JSON encoding says.
enum OTLPMetricsJSON {
    /// OTLP's `AggregationTemporality`: delta is 1, cumulative 2.
    private static func temporalityValue(_ temporality: OTLPExporter.Temporality) -> Int {
        temporality == .delta ? 1 : 2
    }

    /// The body for `snapshot`, sent by `serviceName`.
    static func body(_ snapshot: MetricsSnapshot, serviceName: String) -> Data {
        var out = OTLPJSONBytes()
        out.bytes.reserveCapacity(1024 + snapshot.pointCount * 400)
        out.raw(#"{"resourceMetrics":[{"#)
        OTLPJSON.writeResource(serviceName: serviceName, to: &out)
        out.raw(#","scopeMetrics":[{"#)
        OTLPJSON.writeScope(to: &out)
        out.raw(#","metrics":["#)
        var writer = MetricWriter(out: out, snapshot: snapshot)
        writer.histogram(.requestDuration, snapshot.requests.map { ($0.attributes, $0.start, $0.point.duration) })
        writer.histogram(.requestBodySize, snapshot.requests.map { ($0.attributes, $0.start, $0.point.requestBody) })
        writer.histogram(.responseBodySize, snapshot.requests.map { ($0.attributes, $0.start, $0.point.responseBody) })
        writer.sum(.activeRequests, snapshot.activeRequests, temporality: .cumulative)
        writer.sum(.openConnections, snapshot.openConnections, temporality: .cumulative)
        writer.histogram(.connectionDuration, snapshot.connectionDurations.map { ($0.attributes, $0.start, $0.point) })
        writer.sum(.cacheRequests, snapshot.cacheRequests, temporality: snapshot.temporality)
        out = writer.out
        out.raw("]}]}]}")
        return Data(out.bytes)
    }

    /// Writes one metric after another, with commas between them.
    private struct MetricWriter {
        var out: OTLPJSONBytes
        let snapshot: MetricsSnapshot
        var wroteMetric = false

        /// A histogram metric with a data point for each series that has measurements.
        mutating func histogram(_ instrument: MetricInstrument, _ series: [(MetricAttributes, UInt64, Histogram)]) {
            let points = series.filter { $0.2.count > 0 }
            guard !points.isEmpty else { return }
            begin(instrument)
            out.raw(#","histogram":{"aggregationTemporality":"#)
            out.raw(String(temporalityValue(snapshot.temporality)))
            out.raw(#","dataPoints":["#)
            for (index, (attributes, start, histogram)) in points.enumerated() {
                if index > 0 { out.raw(",") }
                out.raw("{")
                writeCommon(attributes, start: start, temporality: snapshot.temporality)
                out.raw(#","count":"#)
                out.integerString(histogram.count)
                out.raw(#","sum":"#)
                out.double(histogram.sum)
                out.raw(#","min":"#)
                out.double(histogram.minimum)
                out.raw(#","max":"#)
                out.double(histogram.maximum)
                out.raw(#","bucketCounts":["#)
                for (bucket, count) in histogram.buckets.enumerated() {
                    if bucket > 0 { out.raw(",") }
                    out.integerString(count)
                }
                out.raw(#"],"explicitBounds":["#)
                for (bucket, bound) in instrument.boundaries.enumerated() {
                    if bucket > 0 { out.raw(",") }
                    out.double(bound)
                }
                out.raw("]")
                writeExemplars(histogram.exemplars.compactMap { $0 })
                out.raw("}")
            }
            out.raw("]}}")
        }

        /// A sum metric (a counter, or an up-down counter), with a data point for each series.
        mutating func sum(_ instrument: MetricInstrument, _ series: [MetricSeries<Int64>], temporality: OTLPExporter.Temporality) {
            guard !series.isEmpty else { return }
            begin(instrument)
            out.raw(#","sum":{"aggregationTemporality":"#)
            out.raw(String(temporalityValue(temporality)))
            out.raw(instrument.kind == .counter ? #","isMonotonic":true"# : #","isMonotonic":false"#)
            out.raw(#","dataPoints":["#)
            for (index, point) in series.enumerated() {
                if index > 0 { out.raw(",") }
                out.raw("{")
                writeCommon(point.attributes, start: point.start, temporality: temporality)
                out.raw(#","asInt":"#)
                out.integerString(point.point)
                out.raw("}")
            }
            out.raw("]}}")
        }

        /// `{"name":…,"description":…,"unit":…`, after a comma when a metric came before.
        private mutating func begin(_ instrument: MetricInstrument) {
            if wroteMetric { out.raw(",") }
            wroteMetric = true
            out.raw(#"{"name":"#)
            out.string(instrument.name)
            out.raw(#","description":"#)
            out.string(instrument.description)
            out.raw(#","unit":"#)
            out.string(instrument.unit)
        }

        /// A data point's attributes and times: a delta point starts where its interval began, a
        /// cumulative one where its series did.
        private mutating func writeCommon(_ attributes: MetricAttributes, start: UInt64, temporality: OTLPExporter.Temporality) {
            out.raw(#""attributes":["#)
            var first = true
            for (name, value) in attributes.text {
                if !first { out.raw(",") }
                first = false
                out.attribute(name, string: value)
            }
            for (name, value) in attributes.integers {
                if !first { out.raw(",") }
                first = false
                out.attribute(name, integer: value)
            }
            if attributes.isOverflow {
                if !first { out.raw(",") }
                out.attribute("otel.metric.overflow", bool: true)
            }
            out.raw(#"],"startTimeUnixNano":"#)
            out.integerString(temporality == .delta ? snapshot.intervalStart : start)
            out.raw(#","timeUnixNano":"#)
            out.integerString(snapshot.time)
        }

        /// `,"exemplars":[…]` for the exemplars there are.
        private mutating func writeExemplars(_ exemplars: [Histogram.Exemplar]) {
            guard !exemplars.isEmpty else { return }
            out.raw(#","exemplars":["#)
            for (index, exemplar) in exemplars.enumerated() {
                if index > 0 { out.raw(",") }
                out.raw(#"{"timeUnixNano":"#)
                out.integerString(exemplar.time)
                out.raw(#","asDouble":"#)
                out.double(exemplar.value)
                out.raw(#","spanId":""#)
                out.hex(exemplar.span)
                out.raw(#"","traceId":""#)
                out.hex(exemplar.trace.high)
                out.hex(exemplar.trace.low)
                out.raw("\"}")
            }
            out.raw("]")
        }
    }
}
