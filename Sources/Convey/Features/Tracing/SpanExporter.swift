/// Where a traced server's finished spans go (`TracingConfiguration.exporter`): the built-in `OTLPExporter`,
/// or an adapter of the app's own that forwards them to swift-distributed-tracing, swift-otel or
/// a vendor's SDK (Docs/tracing.md shows one).
///
/// `export` is called in the run's own task when the run ends, with the run's spans (its client
/// spans, then the run's own), and again for a span that ends after its run (a cache's
/// background refresh). It must return at once: hand the spans to a queue of your own, never
/// wait for the network. A run never waits for an export to be delivered and never fails
/// because of one.
public protocol SpanExporter: Sendable {
    /// Receives finished spans.
    func export(_ spans: [TraceSpan])
}
