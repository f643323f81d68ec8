import Foundation

/// The client span of the exchange the current task sends, while tracing's step is around it.
enum TracedExchange {
    @TaskLocal static var span: UInt64?
}

/// Tracing's step around each exchange on the wire, after the app's exchange steps (nearest the
/// wire, so that it sees the request exactly as it goes out and each request the app's steps
/// send): gives the request its own span id and resend count, sets `traceparent` and `tracestate`
/// for an allowed origin (and removes them for any other), and makes its client span, which ends
/// when the response's body ends: for a download to a file or a stream, once its reader has read it.
struct ExchangeSpanStep: ChainStep {
    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        guard let run = context.run[TracedRun.self] else { return try await next(request, context) }
        let span = TraceIdentifiers.spanID()
        let resends = run.countSend()
        var sent = request
        if run.policy.propagates(to: request.request.url) {
            sent.request.fields["traceparent"] = TraceContext.traceparent(trace: run.trace, span: span, sampled: run.isSampled)
            sent.request.fields["tracestate"] = run.traceState
        } else if sent.request.fields.contains(named: "traceparent") || sent.request.fields.contains(named: "tracestate") {
            sent.request.fields.remove(named: "traceparent")
            sent.request.fields.remove(named: "tracestate")
        }
        guard run.recordsSpans else { return try await next(sent, context) }
        // The client span's id, for what is measured of the request below (a metric's exemplar).
        return try await TracedExchange.$span.withValue(span) {
            try await spanned(sent, span: span, resends: resends, run: run, context: context, next: next)
        }
    }

    private func spanned(_ sent: TransportRequest, span: UInt64, resends: Int, run: TracedRun, context: StepContext,
                         next: ChainNext) async throws -> Exchange {
        let start = Date()
        var attributes = SpanAttributes(request: sent.request, redaction: run.policy.redaction)
        if resends > 0 { attributes.integers["http.request.resend_count"] = resends }
        var exchange: Exchange
        do {
            exchange = try await next(sent, context)
        } catch {
            attributes.add(error, redaction: run.policy.redaction)
            run.finished(clientSpan(span, of: run, start: start, attributes: attributes, events: []))
            throw error
        }
        attributes.add(exchange)
        let ending = attributes
        let measured = exchange.metrics
        let source: (any BodySource)? = if case .stream(let source) = exchange.body { source } else { nil }
        exchange.body = await exchange.body.observed(chunk: { _ in }, end: { error in
            var ended = ending
            if let error { ended.add(error, redaction: run.policy.redaction) }
            let metrics = source?.metrics ?? measured
            run.finished(clientSpan(span, of: run, start: start, attributes: ended, events: Self.events(metrics, from: start)))
        })
        return exchange
    }

    private func clientSpan(_ span: UInt64, of run: TracedRun, start: Date, attributes: SpanAttributes,
                            events: [(name: String, date: Date)]) -> TraceSpan {
        TraceSpan(trace: run.trace, span: span, parent: run.span, name: attributes.spanName, isClient: true, start: start, end: Date(),
                  attributes: attributes.text, integerAttributes: attributes.integers, events: events, isError: attributes.isError,
                  statusMessage: attributes.statusMessage, traceState: run.traceState)
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
