/// One measurement, as a `MetricsExporter` receives it: an instrument of OpenTelemetry's HTTP
/// client semantic conventions (or Convey's `convey.cache.requests`), a value, and the
/// measurement's attributes (Docs/metrics.md lists every instrument and attribute).
public struct MetricMeasurement: Sendable {
    /// What an instrument adds up to, as OpenTelemetry's kinds of instrument say.
    public enum Kind: Sendable, Hashable {
        /// Only ever goes up: add each value (`convey.cache.requests`).
        case counter
        /// Goes up and down: add each value, negative ones included (`http.client.active_requests`,
        /// `http.client.open_connections`).
        case upDownCounter
        /// A distribution: record each value (the durations and body sizes).
        case histogram
    }

    let instrument: MetricInstrument
    let attributeSet: MetricAttributes
    let exemplar: MetricExemplar?

    /// The value: seconds, bytes, or what a counter adds (1, or -1 for an up-down counter).
    public let value: Double

    init(_ instrument: MetricInstrument, value: Double, attributes: MetricAttributes, exemplar: MetricExemplar? = nil) {
        self.instrument = instrument
        self.value = value
        attributeSet = attributes
        self.exemplar = exemplar
    }

    /// The instrument's name: `http.client.request.duration`, `http.client.active_requests`, …
    public var name: String { instrument.name }
    /// The instrument's unit, in UCUM as the conventions write it: `s`, `By`, `{request}`, `{connection}`.
    public var unit: String { instrument.unit }
    /// The kind of instrument.
    public var kind: Kind { instrument.kind }
    /// The attributes with text values (`http.request.method`, `server.address`, `url.scheme`,
    /// `error.type`, `network.protocol.version`, …).
    public var attributes: [String: String] {
        Dictionary(attributeSet.text.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
    }
    /// The attributes with integer values (`server.port`, `http.response.status_code`).
    public var integerAttributes: [String: Int] {
        Dictionary(attributeSet.integers.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
    }
    /// The trace the measurement was made in (32 lowercase hex digits), when it was made in a
    /// sampled trace of a traced server: a histogram's exemplar.
    public var traceID: String? { exemplar?.trace.hex }
    /// The span of the request measured (16 lowercase hex digits), with `traceID`.
    public var spanID: String? { exemplar.map { TraceHex.string($0.span) } }
}
