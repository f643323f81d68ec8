@_spi(Tools) import Convey
import Foundation

/// Prints records for people: a table for `recorded list`, every detail for `recorded show`.
/// Records were masked when written; what they hold is escaped for the terminal here, since a
/// record holds what a server sent.
struct RecordPrinter {
    let console: Console

    /// `  1  2026-11-21 01:20:30  GET     200        12.3 ms  312 B     http://…`.
    func list(_ records: [RecordedTask]) {
        let numberWidth = String(records.count).count
        for (index, record) in records.enumerated() {
            let number = String(index + 1)
            console.out(String(repeating: " ", count: numberWidth - number.count + 2) + number + "  "
                        + console.styled(LocalTime.text(record.startedAt), .dim) + "  "
                        + padded(DisplayFormat.terminalSafe(record.method), 7)
                        + outcomeText(record, width: 10)
                        + padded(DisplayFormat.duration(.milliseconds(Int64(record.duration * 1000))), 10)
                        + padded(DisplayFormat.byteCount(record.responseBodySize), 10)
                        + DisplayFormat.terminalSafe(record.url ?? "(no request built)"))
        }
    }

    /// The whole record.
    func show(_ record: RecordedTask, number: Int) {
        console.out(console.styled("Record \(number)", .bold) + console.styled("  \(record.id)", .dim))
        field("Task", "\(record.taskName) on \(record.serverName)")
        field("Started", "\(LocalTime.text(record.startedAt)) · \(DisplayFormat.duration(.milliseconds(Int64(record.duration * 1000)))) · attempt \(record.attempt)")
        let status = record.statusCode.map { " · HTTP \($0)" } ?? ""
        field("Outcome", record.outcome.rawValue + status + (record.error.map { " · \($0)" } ?? ""))
        console.out()
        console.out(console.styled("\(record.method) \(record.url ?? "(no request built)")", .boldCyan))
        headers(record.requestFields)
        body(record.requestBody, truncated: record.requestBodyIsTruncated, size: record.requestBodySize)
        if let status = record.statusCode {
            console.out()
            console.out(console.styled("HTTP \(status) \(HTTPStatus.reasonPhrase(for: status))", status < 400 ? .boldGreen : .boldRed))
            headers(record.responseHeaders)
            if let metrics = record.metrics { field("Timings", metrics.description) }
            body(record.responseBody, truncated: record.responseBodyIsTruncated, size: record.responseBodySize)
        }
        let masked = record.redactedParts
        if !masked.isEmpty {
            console.out()
            console.out(console.styled("Masked when recorded: " + masked.joined(separator: ", "), .dim))
        }
    }

    /// The status, or how the attempt ended without one, coloured and padded to `width`.
    private func outcomeText(_ record: RecordedTask, width: Int) -> String {
        let text = record.statusCode.map(String.init) ?? record.outcome.rawValue
        let style: TextStyle = switch record.outcome {
        case .succeeded: .green
        case .httpError, .failed: .red
        case .cancelled: .yellow
        }
        return console.styled(text, style) + String(repeating: " ", count: max(0, width - text.count))
    }

    private func padded(_ text: String, _ width: Int) -> String {
        text.padding(toLength: max(width, text.count + 1), withPad: " ", startingAt: 0)
    }

    private func field(_ name: String, _ value: String) {
        console.out(console.styled(name.padding(toLength: 9, withPad: " ", startingAt: 0), .dim) + DisplayFormat.terminalSafe(value))
    }

    /// Header lines in the order given: as sent or received, repeats kept.
    private func headers(_ headers: [Header]) {
        for header in headers {
            console.out("  " + console.styled(header.name, .cyan) + ": " + DisplayFormat.terminalSafe(header.value))
        }
    }

    private func body(_ body: Data?, truncated: Bool, size: Int) {
        guard size > 0 else { return }
        guard let body else {
            console.out(console.styled("  (\(DisplayFormat.byteCount(size)) body, not recorded)", .dim))
            return
        }
        console.out()
        // The recorder keeps text (UTF-8 without NUL) as text, anything else as bytes.
        if let text = String(data: body, encoding: .utf8), !text.contains("\0") {
            let shown = DisplayFormat.prettyJSON(Data(text.utf8)).map { JSONHighlighter.highlight(DisplayFormat.terminalSafe($0), console: console) }
                ?? DisplayFormat.terminalSafe(text)
            console.out(shown.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map { "  " + $0 }.joined(separator: "\n"))
        } else {
            console.out(console.styled("  (\(DisplayFormat.byteCount(size)) of binary data, kept as base64: see --json)", .dim))
        }
        if truncated { console.out(console.styled("  … (cut at the recorder's body limit; \(DisplayFormat.byteCount(size)) in all)", .dim)) }
    }
}
