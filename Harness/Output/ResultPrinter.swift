@_spi(Tools) import Convey
import Foundation

/// Where a run's response body went.
enum BodyDestination: Sendable {
    /// To standard output, as the output mode shows bodies.
    case shown
    /// To the file `-o` names (or appended to it, with `-C`).
    case file(URL)
    /// Nowhere: `-C` got a 416 (nothing left) or the whole body (not resumed).
    case dropped
}

/// Prints a manual run's result: for people (status line, headers, body, timing), the body alone
/// (`--body-only`, as curl), or as JSON; then `-w`'s format.
///
/// Standard output carries what curl's does (the body, unless `-o` took it) and, for people, the
/// status line and headers before it; with `-o` they go to standard error. The summary line,
/// warnings and errors go to standard error, as `-v` does while the run goes on (`VerbosePrinter`). Everything shown is masked with the server's
/// `Redaction` (bodies as Convey's echo shows them) and escaped for the terminal. `--body-only`
/// into a file or pipe is the exception: the bytes as received, since they are the data asked for.
struct ResultPrinter {
    let console: Console
    let options: OutputOptions
    let redaction: Redaction
    /// Where the body went.
    let destination: BodyDestination

    /// Prints the report and returns its exit code.
    func present(_ report: RunReport, exchanges: Int? = nil) -> ExitCode {
        if options.printsTimings, let metrics = report.response?.metrics {
            console.err(console.styledError("timings: " + (metrics.isEmpty ? "not measured by this transport" : metrics.description), .dim))
        }
        // `-f` shows no body of a failing status; `--fail-with-body` does.
        let showsResponse = !report.failedOnStatus || options.fail == .withBody
        if options.json {
            console.out(JSONReport.text(report, redaction: redaction, exitCode: report.exitCode))
        } else if options.bodyOnly {
            if showsResponse, case .shown = destination, let response = report.response {
                if report.method == HTTPMethod.head.rawValue { writeHead(response) }
                writeBodyOnly(response.data)
            }
            printFailure(report)
        } else {
            if showsResponse, let response = report.response { printForPeople(report, response: response) }
            printFailure(report)
        }
        if let writeOut = options.writeOut {
            let values = WriteOutValues(report: report, redaction: redaction, exchanges: exchanges, bodySize: bodySize(report.response?.data ?? Data()))
            let pieces = writeOut.render(values) { warning in console.err(console.styledError("convey-harness: ", .bold) + warning) }
            for piece in pieces {
                let handle = piece.stream == .standardOutput ? FileHandle.standardOutput : FileHandle.standardError
                handle.write(Data(piece.text.utf8))
            }
        }
        return report.exitCode
    }

    /// The status line and headers, then the body (or where it went), then the summary line.
    private func printForPeople(_ report: RunReport, response: ServerResponse<Data>) {
        guard let status = report.statusText else { return }
        let color: TextStyle = switch response.statusCode {
        case ..<300: .boldGreen
        case ..<400: .boldYellow
        default: .boldRed
        }
        // The head goes where the body goes: with `-o`, standard output stays free, as curl's.
        let headLines = [(console.styled("HTTP \(status)", color), console.styledError("HTTP \(status)", color))]
            + report.responseHeaders(redaction).map { field in
                (console.styled(field.name, .cyan) + ": " + DisplayFormat.terminalSafe(field.value),
                 console.styledError(field.name, .cyan) + ": " + DisplayFormat.terminalSafe(field.value))
            }
        switch destination {
        case .shown:
            for line in headLines { console.out(line.0) }
            console.out()
            if let body = bodyText(report, data: response.data) { console.out(body) }
        case .file(let file):
            guard !options.silent else { return }
            for line in headLines { console.err(line.1) }
            console.err(console.styledError("(\(DisplayFormat.byteCount(bodySize(response.data))) saved to \(file.path(percentEncoded: false)))", .dim))
        case .dropped:
            guard !options.silent else { return }
            for line in headLines { console.err(line.1) }
        }
        guard !options.silent else { return }
        console.err(console.styledError("\(status) · \(DisplayFormat.duration(report.duration)) · \(DisplayFormat.byteCount(bodySize(response.data)))"
                                        + (response.attemptNumber > 1 ? " · attempt \(response.attemptNumber)" : "")
                                        + (response.metrics.certificateVerified == false ? " · " + ExchangeMetrics.verificationOffWarning : "")
                                        + " · \(report.method) \(report.url ?? "")", .dim))
    }

    /// The body's size: as received, or of the file a download wrote (its body is not in memory).
    private func bodySize(_ data: Data) -> Int {
        guard case .file(let file) = destination, data.isEmpty else { return data.count }
        return (try? FileManager.default.attributesOfItem(atPath: file.path(percentEncoded: false))[.size] as? NSNumber)?.intValue ?? 0
    }

    /// The body for people: masked, JSON coloured, escaped for the terminal.
    private func bodyText(_ report: RunReport, data: Data) -> String? {
        if data.isEmpty { return nil }
        guard let text = report.responseBodyText(redaction) else {
            return console.styled("(\(DisplayFormat.byteCount(data.count)) of binary data: save it with -o FILE, or print it with --body-only)", .dim)
        }
        if DisplayFormat.prettyJSON(data) != nil { return JSONHighlighter.highlight(DisplayFormat.terminalSafe(text), console: console) }
        return DisplayFormat.terminalSafe(text.hasSuffix("\n") ? String(text.dropLast()) : text)
    }

    /// `--body-only -I`: the status line and headers as curl prints them, credentials masked.
    private func writeHead(_ response: ServerResponse<Data>) {
        var lines = ["\(response.head.httpVersion) \(response.statusCode) \(HTTPStatus.reasonPhrase(for: response.statusCode))"]
        lines += redaction.maskedFields(response.headerFields).map { "\($0.name): \($0.value)" }
        let text = lines.map { $0 + "\r\n" }.joined() + "\r\n"
        FileHandle.standardOutput.write(Data((console.outputIsTerminal ? DisplayFormat.terminalSafe(text) : text).utf8))
    }

    /// `--body-only`: the bytes as received into a file or pipe; on a terminal, text escaped and
    /// binary refused, so that a server's escape sequences never reach it.
    private func writeBodyOnly(_ data: Data) {
        guard console.outputIsTerminal else {
            FileHandle.standardOutput.write(data)
            return
        }
        guard let text = BodyText.text(data) else {
            console.err(console.styledError("(\(DisplayFormat.byteCount(data.count)) of binary data not written to the terminal: "
                                            + "use -o FILE or a pipe)", .dim))
            return
        }
        FileHandle.standardOutput.write(Data(DisplayFormat.terminalSafe(text).utf8))
    }

    /// What went wrong, on standard error: unless `-s` without `-S`.
    private func printFailure(_ report: RunReport) {
        guard let error = report.errorText, options.showsErrors else { return }
        if report.error?.isCancellation == true {
            console.err(console.styledError("Cancelled: \(report.method) \(report.target)", .yellow))
        } else {
            console.fail(error)
        }
    }
}
