@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// `--spans`, `--traceparent`, `--otlp URL` and `--metrics` on every request command: trace the
/// runs (W3C trace context to the request's own origin, OpenTelemetry spans), show each run's
/// spans as a waterfall, continue a given trace, measure the runs (OpenTelemetry's HTTP client
/// metrics) and show a table of them at the end, and export spans and metrics to a collector.
struct TelemetryOptions: Sendable {
    static let options: [OptionSpec] = [.spans, .traceparent, .otlp, .metrics]

    /// `--spans`: print each run's spans after it.
    var showsSpans = false
    /// `--traceparent`: the trace the runs continue; `nil` begins one each.
    var context: TraceContext?
    /// `--otlp`: the collector's base URL.
    var collector: URL?
    /// `--metrics`: print a table of the runs' request durations at the end.
    var showsMetrics = false
    /// Said on stderr (unless `-s`): an invalid `--traceparent` replaced by a new trace.
    var warnings: [String] = []

    init() {}

    init(_ arguments: ParsedArguments, command: String) throws(UsageError) {
        showsSpans = arguments.has(.spans)
        showsMetrics = arguments.has(.metrics)
        if let value = arguments.value(.traceparent) {
            context = TraceContext(traceparent: value)
            if context == nil {
                warnings.append("--traceparent: '\(DisplayFormat.terminalSafe(value))' is not a valid W3C traceparent (version 00: "
                                + "00-<32 hex>-<16 hex>-<2 hex>, lowercase, ids not all zero): the run begins a new trace")
            }
        }
        if let text = arguments.value(.otlp) {
            let lowered = text.lowercased()
            guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), let url = URL(string: text), url.host() != nil else {
                throw UsageError(message: "--otlp: '\(Redaction.standard.maskedText(text))' is not an http(s) URL of a collector", command: command)
            }
            collector = url
        }
    }

    /// Whether the runs are traced at all.
    var traces: Bool { showsSpans || context != nil || collector != nil || !warnings.isEmpty }
    /// Whether the runs are measured at all.
    var measures: Bool { showsMetrics || collector != nil }

    /// What keeps the spans and measurements of the invocation's runs, or `nil` when no option asks for any.
    func session() -> TelemetrySession? {
        guard traces || measures else { return nil }
        return TelemetrySession(options: self)
    }

    /// Runs `operation` inside the `--traceparent` context, when one was given.
    @ConveyActor
    func scope<Result: Sendable>(_ operation: @ConveyActor () async throws -> Result) async throws -> Result {
        guard let context else { return try await operation() }
        return try await TraceContext.$current.withValue(context) { try await operation() }
    }
}

/// The spans and measurements of one harness invocation, shared by its runs (one per URL): each
/// run's spans kept for `--spans`, the durations for `--metrics`, both sent to the `--otlp`
/// collector before the harness exits.
final class TelemetrySession: Sendable {
    private let options: TelemetryOptions
    private let kept: SpanList?
    private let summary: MetricsSummary?
    private let otlp: OTLPExporter?

    init(options: TelemetryOptions) {
        self.options = options
        kept = options.showsSpans ? SpanList() : nil
        summary = options.showsMetrics ? MetricsSummary() : nil
        otlp = options.collector.map { OTLPExporter(collector: $0, serviceName: "convey-harness") }
    }

    /// Turns tracing and metrics on in a run's server configuration, as the options ask.
    func apply(to configuration: inout ServerConfiguration) {
        if options.traces {
            configuration.tracing = TracingConfiguration(exporter: spanExporter)
        }
        if let metricsExporter {
            configuration.metrics = MetricsConfiguration(exporter: metricsExporter)
        }
    }

    /// Where the runs' spans go, or `nil` when only the context is wanted.
    private var spanExporter: (any SpanExporter)? {
        switch (kept, otlp) {
        case (nil, nil): nil
        case (let kept?, nil): kept
        case (nil, let otlp?): otlp
        case (let kept?, let otlp?): SpanFanOut(exporters: [kept, otlp])
        }
    }

    /// Where the runs' measurements go, or `nil` when none is wanted.
    private var metricsExporter: (any MetricsExporter)? {
        switch (summary, otlp) {
        case (nil, nil): nil
        case (let summary?, nil): summary
        case (nil, let otlp?): otlp
        case (let summary?, let otlp?): MetricsFanOut(exporters: [summary, otlp])
        }
    }

    /// After a run: its spans as a waterfall (`--spans`).
    func finishRun(console: Console) {
        guard let kept else { return }
        for line in SpanWaterfall(spans: kept.take()).lines(console: console) { console.err(line) }
    }

    /// After the last run: the metrics table (`--metrics`), and the export (`--otlp`), sent before
    /// the harness exits, with what could not be delivered said.
    func finish(console: Console, silent: Bool) async {
        if let otlp {
            await otlp.shutdown()
            if otlp.droppedSpans > 0, !silent {
                console.err(console.styledError("--otlp: \(otlp.droppedSpans) span(s) not delivered to \(otlp.endpoint.absoluteString)", .yellow))
            }
        }
        if let summary {
            console.err(console.styledError("Metrics  http.client.request.duration", .bold))
            for line in summary.lines { console.err("  " + line) }
        }
    }
}

/// Keeps the spans exported to it until a run's waterfall takes them.
private final class SpanList: SpanExporter {
    private let list = LockedSpans()

    func export(_ spans: [TraceSpan]) { list.append(spans) }

    /// The spans kept so far, which are no longer kept.
    func take() -> [TraceSpan] { list.take() }
}

/// Spans behind a lock.
private final class LockedSpans: @unchecked Sendable {  // guarded by: its NSLock
    // Guarded by `lock`.
    private let lock = NSLock()
    private var spans: [TraceSpan] = []

    func append(_ more: [TraceSpan]) { lock.withLock { spans += more } }

    func take() -> [TraceSpan] {
        lock.withLock {
            defer { spans = [] }
            return spans
        }
    }
}

/// Hands spans to several exporters.
private struct SpanFanOut: SpanExporter {
    let exporters: [any SpanExporter]

    func export(_ spans: [TraceSpan]) {
        for exporter in exporters { exporter.export(spans) }
    }
}

/// Hands measurements to several exporters.
private struct MetricsFanOut: MetricsExporter {
    let exporters: [any MetricsExporter]

    func record(_ measurement: MetricMeasurement) {
        for exporter in exporters { exporter.record(measurement) }
    }
}

extension OptionSpec {
    static let spans = OptionSpec(["--spans"], curl: .harnessOnly,
                                  help: "trace the run and print its spans after it: one bar per attempt and redirect hop (DNS, connect, TLS, wait, transfer)")
    static let traceparent = OptionSpec(["--traceparent"], value: "VALUE", curl: .harnessOnly,
                                        help: "continue this W3C trace (00-TRACEID-PARENTID-FLAGS); an invalid one begins a new trace")
    static let otlp = OptionSpec(["--otlp"], value: "URL", curl: .harnessOnly,
                                 help: "trace and measure the runs and send their spans and metrics to the OpenTelemetry collector at URL (OTLP/HTTP JSON, URL/v1/traces and URL/v1/metrics) before exiting")
    static let metrics = OptionSpec(["--metrics"], curl: .harnessOnly,
                                    help: "measure the runs and print a table at the end: per host and status, count, p50 and p99 of the request durations")
}
