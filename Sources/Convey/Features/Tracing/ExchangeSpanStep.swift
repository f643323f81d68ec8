import Foundation

/// Tracing's step around each exchange on the wire, innermost of the exchange steps (nearest the
/// wire, so that it sees the request exactly as it goes out and each request the app's steps
/// send): gives the request its own span id and resend count, sets `traceparent` and `tracestate`
/// for an allowed origin (and removes them for any other), and makes its client span.
struct ExchangeSpanStep: Interceptor {
    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        guard let run = TracedRun.current else { return try await next(request) }
        let span = TraceIdentifiers.spanID()
        let resends = run.countSend()
        var sent = request
        if run.policy.propagates(to: request.url) {
            sent.fields["traceparent"] = TraceContext.traceparent(trace: run.trace, span: span, sampled: run.isSampled)
            sent.fields["tracestate"] = run.traceState
        } else if sent.fields.contains(named: "traceparent") || sent.fields.contains(named: "tracestate") {
            sent.fields.remove(named: "traceparent")
            sent.fields.remove(named: "tracestate")
        }
        guard run.recordsSpans else { return try await next(sent) }

        let start = Date()
        var attributes = SpanAttributes(request: sent, redaction: run.policy.redaction)
        if resends > 0 { attributes.integers["http.request.resend_count"] = resends }
        do {
            let response = try await next(sent)
            attributes.add(response)
            run.finished(clientSpan(span, of: run, start: start, attributes: attributes, events: Self.events(response.metrics, from: start)))
            return response
        } catch {
            attributes.add(error, redaction: run.policy.redaction)
            run.finished(clientSpan(span, of: run, start: start, attributes: attributes, events: []))
            throw error
        }
    }

    private func clientSpan(_ span: UInt64, of run: TracedRun, start: Date, attributes: SpanAttributes,
                            events: [(name: String, date: Date)]) -> TraceSpan {
        TraceSpan(trace: run.trace, span: span, parent: run.span, name: attributes.spanName, isClient: true, start: start, end: Date(), attributes: attributes.text, integerAttributes: attributes.integers,
                  events: events, isError: attributes.isError, statusMessage: attributes.statusMessage, traceState: run.traceState)
    }

    /// The transport's timings as events, each at its offset from the span's start.
    static func events(_ metrics: ExchangeMetrics, from start: Date) -> [(name: String, date: Date)] {
        let marks: [(String, Duration?)] = [
            ("convey.dns_done", metrics.nameLookup), ("convey.connected", metrics.connect), ("convey.tls_done", metrics.tlsHandshake),
            ("convey.first_byte", metrics.firstByte), ("convey.transfer_done", metrics.total),
        ]
        var events: [(name: String, date: Date)] = []
        events.reserveCapacity(marks.count)
        for (name, offset) in marks {
            guard let offset else { continue }
            events.append((name, start.addingTimeInterval(Double(offset.components.seconds) + Double(offset.components.attoseconds) * 1e-18)))
        }
        return events
    }
}
