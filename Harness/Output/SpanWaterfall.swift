@_spi(Tools) import Convey
import Foundation

/// `--spans`: a run's spans as a waterfall on the terminal. Each run is a line with its whole
/// length; under it each request on the wire (every attempt and redirect hop) is a bar placed on
/// the same time scale, split into what the transport measured: DNS `░`, connect `▒`, TLS `▓`,
/// waiting for the first byte `█`, transfer `▄`; `·` is time the transport did not account for
/// (Convey's own, or an exchange without timings). Status, resend count, duration and the URL
/// (`url.full`, secrets already masked) follow each bar.
///
/// ```
/// Spans  trace 4bf92f3577b34da6a3ce929d0e0e4736
///   ManualRequest 200         ████████████████████████████████████████  8.4 ms
///     GET 302                 ░▒███▄                                    1.6 ms  http://127.0.0.1:8080/redirect/1
///     GET 200  resend 1              ▒████▄▄                            1.9 ms  http://127.0.0.1:8080/get
///   ░ dns  ▒ connect  ▓ tls  █ wait  ▄ transfer  · other
/// ```
struct SpanWaterfall {
    let spans: [TraceSpan]
    /// The bar's width in columns.
    static let width = 40
    private static let labelWidth = 26

    /// The lines to print: nothing when there is no span.
    func lines(console: Console) -> [String] {
        let runs = spans.filter { !$0.isClient }.sorted { $0.start < $1.start }
        guard !runs.isEmpty else { return ["Spans  none were made (an unsampled --traceparent makes none)"] }
        var lines: [String] = []
        for run in runs {
            lines.append(console.styledError("Spans", .bold) + "  trace \(run.traceID)" + (run.parentSpanID.map { "  parent \($0)" } ?? ""))
            let scale = Scale(start: run.start, end: max(run.end, spans.filter { $0.parentSpanID == run.spanID }.map(\.end).max() ?? run.end))
            lines.append(row(label: "  \(run.name) \(status(of: run))", bar: scale.bar(from: run.start, to: run.end, fill: "█"), span: run, console: console))
            let clients = spans.filter { $0.isClient && $0.parentSpanID == run.spanID }.sorted { $0.start < $1.start }
            for client in clients {
                var label = "    \(client.name) \(status(of: client))"
                if let resends = client.integerAttributes["http.request.resend_count"] { label += "  resend \(resends)" }
                lines.append(row(label: label, bar: scale.phases(of: client), span: client, console: console,
                                 url: client.attributes["url.full"]))
            }
            if clients.isEmpty, let cache = run.attributes["convey.cache.status"] {
                lines.append("    (no request on the wire: the cache answered, \(cache))")
            }
        }
        lines.append("  ░ dns  ▒ connect  ▓ tls  █ wait  ▄ transfer  · other")
        return lines
    }

    /// The status, or what ended the span.
    private func status(of span: TraceSpan) -> String {
        if let code = span.integerAttributes["http.response.status_code"] { return String(code) }
        return span.attributes["error.type"] ?? "–"
    }

    private func row(label: String, bar: String, span: TraceSpan, console: Console, url: String? = nil) -> String {
        let padded = label.count < Self.labelWidth ? label + String(repeating: " ", count: Self.labelWidth - label.count) : label + " "
        let duration = DisplayFormat.duration(.seconds(span.end.timeIntervalSince(span.start)))
        let styledBar = console.styledError(bar, span.isError ? .red : .cyan)
        return DisplayFormat.terminalSafe(padded) + styledBar + "  " + duration + (url.map { "  " + DisplayFormat.terminalSafe($0) } ?? "")
    }

    /// Times to columns over one run.
    private struct Scale {
        let start: Date
        let end: Date

        private var length: TimeInterval { max(end.timeIntervalSince(start), 1e-9) }

        func column(_ date: Date) -> Int {
            min(SpanWaterfall.width, max(0, Int((date.timeIntervalSince(start) / length * Double(SpanWaterfall.width)).rounded())))
        }

        /// A bar of `fill` from one time to another, at least one column long.
        func bar(from: Date, to: Date, fill: Character) -> String {
            var cells = Array(repeating: Character(" "), count: SpanWaterfall.width)
            let first = min(column(from), SpanWaterfall.width - 1)
            for index in first..<max(first + 1, column(to)) { cells[index] = fill }
            return String(cells)
        }

        /// A client span's bar, split into the phases its events mark.
        func phases(of span: TraceSpan) -> String {
            var cells = Array(bar(from: span.start, to: span.end, fill: "·"))
            func event(_ name: String) -> Date? { span.events.first { $0.name == name }?.date }
            let dns = event("convey.dns_done")
            let connected = event("convey.connected")
            let tls = event("convey.tls_done")
            let firstByte = event("convey.first_byte")
            let done = event("convey.transfer_done")
            var from = span.start
            for (until, fill) in [(dns, "░"), (connected, "▒"), (tls, "▓"), (firstByte, "█"), (done, "▄")] as [(Date?, Character)] {
                guard let until, until > from else { continue }
                let first = column(from)
                for index in first..<max(first, min(column(until), SpanWaterfall.width)) { cells[index] = fill }
                from = until
            }
            return String(cells)
        }
    }
}
