/// Where a server's measurements go (`MetricsConfiguration.exporter`): the built-in `OTLPExporter`,
/// which aggregates them and sends them to an OpenTelemetry collector, or an adapter of the app's
/// own that forwards them to swift-metrics, swift-otel or a vendor's SDK (Docs/metrics.md shows one).
///
/// `record` is called once per measurement, in the task that made it (the run's, or the
/// transport's for a connection), while runs are under way: it must return at once and must not
/// wait for a lock another run holds for long. Hand each measurement to an instrument of your
/// own, or aggregate it; never wait for the network. A run never fails because of a measurement.
public protocol MetricsExporter: Sendable {
    /// Receives one measurement.
    func record(_ measurement: MetricMeasurement)
}
