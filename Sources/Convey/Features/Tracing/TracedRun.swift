import Foundation

/// One traced run: its trace, its own span, what its exchanges share (how many requests it sent,
/// the client spans made so far) and where its spans go. The run's span step makes it and keeps it
/// among the run's values, where the exchange span step finds it.
final class TracedRun: Sendable, RunValueKey {
    typealias Value = TracedRun

    let trace: TraceID
    /// The run's own span, parent of its client spans.
    let span: UInt64
    let isSampled: Bool
    let traceState: String?
    let policy: TracePolicy
    private let state = Locked(State())

    private struct State: Sendable {
        var sends = 0
        var spans: [TraceSpan] = []
        var ended = false
    }

    init(trace: TraceID, span: UInt64, isSampled: Bool, traceState: String?, policy: TracePolicy) {
        self.trace = trace
        self.span = span
        self.isSampled = isSampled
        self.traceState = traceState
        self.policy = policy
    }

    /// Whether the run's spans are made: the trace is sampled and the server has an exporter.
    var recordsSpans: Bool { isSampled && policy.exporter != nil }

    /// The context a request of the run carries when it goes out as `span`.
    func context(span: UInt64) -> TraceContext {
        TraceContext(trace: trace, span: span, isSampled: isSampled, traceState: traceState)
    }

    /// How many requests the run sent before this one (`http.request.resend_count`), counting this one as sent.
    func countSend() -> Int {
        state.withLock { state in
            defer { state.sends += 1 }
            return state.sends
        }
    }

    /// Keeps a client span until the run ends; one that ends after its run is exported at once.
    func finished(_ clientSpan: TraceSpan) {
        let late = state.withLock { state in
            if state.ended { return true }
            state.spans.append(clientSpan)
            return false
        }
        if late { policy.exporter?.export([clientSpan]) }
    }

    /// Exports the run's client spans, then its own.
    func ended(with runSpan: TraceSpan) {
        var spans = state.withLock { state in
            state.ended = true
            defer { state.spans = [] }
            return state.spans
        }
        spans.append(runSpan)
        policy.exporter?.export(spans)
    }
}

/// What a traced server's runs need to know, read once per run: which origins get trace
/// headers, how URLs are masked, and where spans go.
struct TracePolicy: Sendable {
    /// The remote's origin, when it gets trace headers, and the other origins that do.
    let remote: TraceOrigin?
    let origins: [TraceOrigin]
    let redaction: Redaction
    let exporter: (any SpanExporter)?
    /// Which new traces are sampled.
    let sampler: TraceSampler

    /// The policy of a run planned as `plan` and started as `start`, or `nil` when its server has no tracing.
    @ConveyActor
    init?(of plan: RunPlan, start: RunStart) {
        let configuration = plan.server.storedConfiguration
        guard let tracing = configuration.tracing else { return nil }
        self.init(tracing: tracing, remote: start.url ?? plan.server.remote?.url, redaction: configuration.redaction)
    }

    /// The policy of `tracing` for runs to `remote`, masking with `redaction`.
    init(tracing: TracingConfiguration, remote: URL?, redaction: Redaction) {
        self.remote = tracing.propagatesToRemote ? remote.flatMap(TraceOrigin.init(url:)) : nil
        origins = tracing.origins
        self.redaction = redaction
        exporter = tracing.exporter
        sampler = tracing.sampler
    }

    /// Whether a request to `url` may carry trace headers.
    func propagates(to url: URL) -> Bool {
        guard let origin = TraceOrigin(url: url) else { return false }
        return origin == remote || origins.contains(origin)
    }
}
