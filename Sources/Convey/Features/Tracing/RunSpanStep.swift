import Foundation

/// Tracing's step around the run, outermost of all (before the app's own steps around the run,
/// so that the run's span covers them): continues the app's current trace (`TraceContext.current`,
/// sampled as it says) or begins one (sampled as the configuration's ratio decides), keeps the run's trace for its exchanges (`TracedRun`, among the run's values),
/// sets the run's span as the current context for what runs inside, and makes the run's own span,
/// which ends when the run's body ends (a stream's, once read).
struct RunSpanStep: ChainStep {
    let policy: TracePolicy
    /// The name of the run's span: the task's type, or the task the app queued for an outbox delivery.
    let name: String

    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        let incoming = TraceContext.current
        let trace = incoming?.trace ?? TraceIdentifiers.traceID()
        let run = TracedRun(trace: trace, span: TraceIdentifiers.spanID(), isSampled: policy.sampler.isSampled(parent: incoming, newTrace: trace),
                            traceState: incoming?.traceState, policy: policy)
        context.run[TracedRun.self] = run
        /// The rest of the run, inside the run's span.
        func rest() async throws -> Exchange {
            try await TraceContext.$current.withValue(run.context(span: run.span)) { try await next(request, context) }
        }
        guard run.recordsSpans else { return try await rest() }
        let start = Date()
        var attributes = SpanAttributes(request: request.request, redaction: policy.redaction)
        var exchange: Exchange
        do {
            exchange = try await rest()
        } catch {
            attributes.add(error, redaction: policy.redaction)
            run.ended(with: span(of: run, parent: incoming?.span, start: start, attributes: attributes))
            throw error
        }
        attributes.add(status: exchange.head.statusCode)
        attributes.text["convey.cache.status"] = (exchange.tags[CacheStatus.self] ?? .network).rawValue
        attributes.integers["convey.attempts"] = exchange.attemptNumber
        let ending = attributes
        exchange.body = await exchange.body.observed(chunk: { _ in }, end: { [policy] error in
            var ended = ending
            if let error { ended.add(error, redaction: policy.redaction) }
            run.ended(with: span(of: run, parent: incoming?.span, start: start, attributes: ended))
        })
        return exchange
    }

    private func span(of run: TracedRun, parent: UInt64?, start: Date, attributes: SpanAttributes) -> TraceSpan {
        TraceSpan(trace: run.trace, span: run.span, parent: parent, name: name, isClient: false, start: start, end: Date(),
                  attributes: attributes.text, integerAttributes: attributes.integers, isError: attributes.isError,
                  statusMessage: attributes.statusMessage, traceState: run.traceState)
    }
}
