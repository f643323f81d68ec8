/// OpenTelemetry's HTTP client metrics for a server's runs (`ServerConfiguration.metrics`; off
/// while `nil`, the default): each request on the wire measured, as the semantic conventions name
/// the instruments and their attributes, and handed to an exporter. See Docs/metrics.md.
///
/// ```swift
/// let exporter = OTLPExporter(collector: URL(string: "http://127.0.0.1:4318")!)
/// configuration.metrics = MetricsConfiguration(exporter: exporter)
/// configuration.tracing = TracingConfiguration(exporter: exporter)   // the same exporter, for spans too
/// ```
///
/// No attribute holds a URL, a path, a query or a credential: the host, port, scheme, method,
/// status, protocol version and error type only, so that the number of series stays small.
public struct MetricsConfiguration: Sendable {
    /// Where measurements go.
    public var exporter: any MetricsExporter {
        didSet { recorder = MetricsRecorder(exporter: exporter) }
    }
    /// What runs record their measurements with: made once, shared by every run of the server.
    private(set) var recorder: MetricsRecorder

    /// Metrics handed to `exporter`.
    public init(exporter: any MetricsExporter) {
        self.exporter = exporter
        recorder = MetricsRecorder(exporter: exporter)
    }
}
