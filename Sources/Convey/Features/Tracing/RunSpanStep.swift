import Foundation

/// Tracing's step around a run, outermost of the run's steps: continues the app's current trace
/// (`TraceContext.current`) or begins one, makes the run's own span around every attempt, and
/// sets the run (`TracedRun.current`) and its span (`TraceContext.current`) for what runs inside.
struct RunSpanStep: Interceptor {
    let policy: TracePolicy
    /// The task's type, whose name the run's span takes (made only when a span is).
    let taskType: any DownloadingTask.Type

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        let incoming = TraceContext.current
        let run = TracedRun(trace: incoming?.trace ?? TraceIdentifiers.traceID(), span: TraceIdentifiers.spanID(),
                            isSampled: incoming?.isSampled ?? true, traceState: incoming?.traceState, policy: policy)
        /// The rest of the run, inside the run and its span.
        func rest() async throws -> ServerResponse<Data> {
            try await TracedRun.$current.withValue(run) {
                try await TraceContext.$current.withValue(run.context(span: run.span)) { try await next(request) }
            }
        }
        guard run.recordsSpans else { return try await rest() }
        let start = Date()
        var attributes = SpanAttributes(request: request, redaction: policy.redaction)
        do {
            let response = try await rest()
            attributes.add(status: response.statusCode)
            attributes.text["convey.cache.status"] = response.cacheStatus.rawValue
            attributes.integers["convey.attempts"] = response.attemptNumber
            run.ended(with: span(of: run, parent: incoming?.span, start: start, attributes: attributes))
            return response
        } catch {
            attributes.add(error, redaction: policy.redaction)
            run.ended(with: span(of: run, parent: incoming?.span, start: start, attributes: attributes))
            throw error
        }
    }

    private func span(of run: TracedRun, parent: UInt64?, start: Date, attributes: SpanAttributes) -> TraceSpan {
        TraceSpan(trace: run.trace, span: run.span, parent: parent, name: String(describing: taskType), isClient: false, start: start, end: Date(),
                  attributes: attributes.text, integerAttributes: attributes.integers, isError: attributes.isError,
                  statusMessage: attributes.statusMessage, traceState: run.traceState)
    }
}
