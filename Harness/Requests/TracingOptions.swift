@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// `--spans`, `--traceparent VALUE` and `--otlp URL` on every request command: trace the run
/// (W3C trace context to the request's own origin, OpenTelemetry spans), show its spans as a
/// waterfall, continue a given trace, and export the spans to a collector.
struct TracingOptions: Sendable {
    static let options: [OptionSpec] = [.spans, .traceparent, .otlp]

    /// `--spans`: print the run's spans after it.
    var showsSpans = false
    /// `--traceparent`: the trace the run continues; `nil` begins one.
    var context: TraceContext?
    /// `--otlp`: the collector's base URL.
    var collector: URL?
    /// Said on stderr (unless `-s`): an invalid `--traceparent` replaced by a new trace.
    var warnings: [String] = []

    init() {}

    init(_ arguments: ParsedArguments, command: String) throws(UsageError) {
        showsSpans = arguments.has(.spans)
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

    /// Whether the run is traced at all.
    var isOn: Bool { showsSpans || context != nil || collector != nil || !warnings.isEmpty }

    /// Turns tracing on in `configuration` when any option asks for it; what keeps the run's spans.
    func apply(to configuration: inout ServerConfiguration) -> TracingSession? {
        guard isOn else { return nil }
        let session = TracingSession(showsSpans: showsSpans, collector: collector)
        configuration.tracing = TracingConfiguration(exporter: session.exporter)
        return session
    }

    /// Runs `operation` inside the `--traceparent` context, when one was given.
    @ConveyActor
    func scope<Result: Sendable>(_ operation: @ConveyActor () async throws -> Result) async throws -> Result {
        guard let context else { return try await operation() }
        return try await TraceContext.$current.withValue(context) { try await operation() }
    }
}

/// The spans of one harness run: kept for `--spans`, sent to the `--otlp` collector.
final class TracingSession: Sendable {
    private let kept: SpanList?
    private let otlp: OTLPExporter?

    init(showsSpans: Bool, collector: URL?) {
        kept = showsSpans ? SpanList() : nil
        otlp = collector.map { OTLPExporter(collector: $0, serviceName: "convey-harness") }
    }

    /// Where the run's spans go, or `nil` when only the context is wanted.
    var exporter: (any SpanExporter)? {
        switch (kept, otlp) {
        case (nil, nil): nil
        case (let kept?, nil): kept
        case (nil, let otlp?): otlp
        case (let kept?, let otlp?): SpanFanOut(exporters: [kept, otlp])
        }
    }

    /// After the run: the waterfall (`--spans`) and the export (`--otlp`), sent before the
    /// harness exits, with what could not be delivered said.
    func finish(console: Console, silent: Bool) async {
        if let kept {
            for line in SpanWaterfall(spans: kept.spans).lines(console: console) { console.err(line) }
        }
        guard let otlp else { return }
        await otlp.shutdown()
        if otlp.droppedSpans > 0, !silent {
            console.err(console.styledError("--otlp: \(otlp.droppedSpans) span(s) not delivered to \(otlp.endpoint.absoluteString)", .yellow))
        }
    }
}

/// Keeps the spans exported to it.
private final class SpanList: SpanExporter {
    private let list = LockedSpans()

    func export(_ spans: [TraceSpan]) { list.append(spans) }

    var spans: [TraceSpan] { list.all }
}

/// Spans behind a lock.
private final class LockedSpans: @unchecked Sendable {  // guarded by: its NSLock
    // Guarded by `lock`.
    private let lock = NSLock()
    private var spans: [TraceSpan] = []

    func append(_ more: [TraceSpan]) { lock.withLock { spans += more } }

    var all: [TraceSpan] { lock.withLock { spans } }
}

/// Hands spans to several exporters.
private struct SpanFanOut: SpanExporter {
    let exporters: [any SpanExporter]

    func export(_ spans: [TraceSpan]) {
        for exporter in exporters { exporter.export(spans) }
    }
}

extension OptionSpec {
    static let spans = OptionSpec(["--spans"], curl: .harnessOnly,
                                  help: "trace the run and print its spans after it: one bar per attempt and redirect hop (DNS, connect, TLS, wait, transfer)")
    static let traceparent = OptionSpec(["--traceparent"], value: "VALUE", curl: .harnessOnly,
                                        help: "continue this W3C trace (00-TRACEID-PARENTID-FLAGS); an invalid one begins a new trace")
    static let otlp = OptionSpec(["--otlp"], value: "URL", curl: .harnessOnly,
                                 help: "trace the run and send its spans to the OpenTelemetry collector at URL (OTLP/HTTP JSON, URL/v1/traces)")
}
