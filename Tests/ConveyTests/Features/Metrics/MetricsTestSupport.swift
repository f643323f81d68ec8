import Foundation
import Testing
@_spi(Transport) @testable import Convey

/// Keeps every measurement recorded to it, for assertions.
final class MeasurementLog: MetricsExporter {
    private let kept = Locked<[MetricMeasurement]>([])

    func record(_ measurement: MetricMeasurement) {
        kept.withLock { $0.append(measurement) }
    }

    var measurements: [MetricMeasurement] { kept.value }

    /// The measurements of the instrument named `name`.
    func named(_ name: String) -> [MetricMeasurement] { measurements.filter { $0.name == name } }
}

/// A data point of an `ExportMetricsServiceRequest` as opentelemetry-proto parsed it (scripts/otlp-collector.py).
struct CollectedMetricPoint: Decodable, Sendable {
    let name: String
    let unit: String
    let description: String
    /// `histogram` or `sum`.
    let kind: String
    /// 1 delta, 2 cumulative.
    let temporality: Int
    let isMonotonic: Bool
    let attributes: [String: JSONValue]
    let start: UInt64
    let time: UInt64
    let scope: String
    let service: String?
    let count: Int?
    let sum: Double?
    let bucketCounts: [Int]?
    let explicitBounds: [Double]?
    let exemplars: [Exemplar]?
    let value: Double?

    struct Exemplar: Decodable, Sendable {
        let traceId: String
        let spanId: String
        let value: Double
    }

    /// The attributes as text: strings as they are, numbers and flags written out.
    var textAttributes: [String: String] {
        attributes.mapValues { value in
            switch value {
            case .string(let text): text
            case .number(let number): number == number.rounded() ? String(Int(number)) : String(number)
            case .bool(let flag): String(flag)
            default: "\(value)"
            }
        }
    }
}

/// A data point of an OTLP JSON metrics body, read back with `JSONSerialization` (the wire tests
/// read them with opentelemetry-proto instead).
struct ExportedPoint: Sendable {
    let name: String
    let unit: String
    /// `histogram` or `sum`.
    let kind: String
    let temporality: Int
    let isMonotonic: Bool?
    /// Every attribute as text.
    let attributes: [String: String]
    let start: UInt64
    let time: UInt64
    let count: UInt64?
    let sum: Double?
    let minimum: Double?
    let maximum: Double?
    let buckets: [UInt64]?
    let bounds: [Double]?
    let exemplars: [(traceId: String, spanId: String, value: Double)]
    let value: Int64?

    /// Every data point of `body`, an `ExportMetricsServiceRequest` in OTLP JSON.
    static func parse(_ body: Data) throws -> [ExportedPoint] {
        let document = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        let resources = try #require(document["resourceMetrics"] as? [[String: Any]])
        var points: [ExportedPoint] = []
        for resource in resources {
            for scope in try #require(resource["scopeMetrics"] as? [[String: Any]]) {
                for metric in try #require(scope["metrics"] as? [[String: Any]]) {
                    let kind = metric["histogram"] != nil ? "histogram" : "sum"
                    let data = try #require(metric[kind] as? [String: Any])
                    for point in try #require(data["dataPoints"] as? [[String: Any]]) {
                        points.append(try ExportedPoint(metric: metric, kind: kind, data: data, point: point))
                    }
                }
            }
        }
        return points
    }

    private init(metric: [String: Any], kind: String, data: [String: Any], point: [String: Any]) throws {
        func integer(_ value: Any?) -> UInt64? { (value as? String).flatMap { UInt64($0) } }
        name = try #require(metric["name"] as? String)
        unit = try #require(metric["unit"] as? String)
        self.kind = kind
        temporality = try #require(data["aggregationTemporality"] as? Int)
        isMonotonic = data["isMonotonic"] as? Bool
        var attributes: [String: String] = [:]
        for attribute in try #require(point["attributes"] as? [[String: Any]]) {
            let key = try #require(attribute["key"] as? String)
            let value = try #require(attribute["value"] as? [String: Any])
            if let text = value["stringValue"] as? String {
                attributes[key] = text
            } else if let number = value["intValue"] as? String {
                attributes[key] = number
            } else if let flag = value["boolValue"] as? Bool {
                attributes[key] = String(flag)
            }
        }
        self.attributes = attributes
        start = try #require(integer(point["startTimeUnixNano"]))
        time = try #require(integer(point["timeUnixNano"]))
        count = integer(point["count"])
        sum = point["sum"] as? Double
        minimum = point["min"] as? Double
        maximum = point["max"] as? Double
        buckets = (point["bucketCounts"] as? [String])?.compactMap { UInt64($0) }
        bounds = point["explicitBounds"] as? [Double]
        exemplars = (point["exemplars"] as? [[String: Any]] ?? []).map {
            (traceId: $0["traceId"] as? String ?? "", spanId: $0["spanId"] as? String ?? "", value: $0["asDouble"] as? Double ?? -1)
        }
        value = (point["asInt"] as? String).flatMap { Int64($0) }
    }
}

extension [ExportedPoint] {
    /// The points of the metric named `name`.
    func named(_ name: String) -> [ExportedPoint] { filter { $0.name == name } }
}

/// One request on the wire as the pipeline's metrics step reports it to the recorder: its method
/// and URL, then a status (and protocol) or an error.
struct WireRequest: Sendable {
    let method: HTTPMethod
    let url: URL
    let status: Int?
    let error: (any Error)?
    let protocolVersion: String?
    let seconds: Double
    let requestBodySize: Int?
    let responseBodySize: Int?

    static func answered(_ url: String, _ status: Int, method: HTTPMethod = .get, version: String = "HTTP/1.1", seconds: Double = 0.02,
                         sent: Int? = nil, received: Int? = 120) -> WireRequest {
        WireRequest(method: method, url: URL(string: url)!, status: status, error: nil, protocolVersion: version, seconds: seconds,
                    requestBodySize: sent, responseBodySize: received)
    }

    static func failed(_ url: String, _ error: any Error, method: HTTPMethod = .get, seconds: Double = 0.02) -> WireRequest {
        WireRequest(method: method, url: URL(string: url)!, status: nil, error: error, protocolVersion: nil, seconds: seconds,
                    requestBodySize: nil, responseBodySize: nil)
    }

    /// Records the request as the step will: started, then ended with its outcome.
    func record(on recorder: MetricsRecorder, exemplar: MetricExemplar? = nil) {
        var attributes = MetricAttributes(method: method, url: url)
        recorder.requestStarted(attributes)
        if let status { attributes.add(status: status, protocolVersion: protocolVersion) }
        if let error { attributes.add(error) }
        recorder.requestEnded(attributes, duration: .nanoseconds(Int64(seconds * 1e9)), requestBodySize: requestBodySize,
                              responseBodySize: responseBodySize, exemplar: exemplar)
    }
}

/// An OTLP exporter that sends nothing by itself (an hour between exports, a collector nothing
/// listens on), for tests that read its aggregator.
func quietExporter(temporality: OTLPExporter.Temporality = .cumulative, cardinalityLimit: Int = 2000) throws -> OTLPExporter {
    OTLPExporter(collector: try closedLoopbackURL(), headers: [], serviceName: "convey-tests", maximumQueueSize: 16, maximumBatchSize: 16,
                 batchInterval: .seconds(3600), timeout: .seconds(1), metricsInterval: .seconds(3600), temporality: temporality,
                 cardinalityLimit: cardinalityLimit, retryWait: { _ in })
}
