@_spi(Tools) import Convey
import Foundation

/// Prints a manual run's result: for people (status line, headers, body, timing) or as JSON.
///
/// Everything shown is masked with the server's `Redaction` (bodies as Convey's echo shows them)
/// and escaped for the terminal. `--body-only` into a file or pipe is the exception: the bytes as
/// received, since they are the data asked for.
struct ResultPrinter {
    let console: Console
    let options: OutputOptions
    let redaction: Redaction

    /// Prints the report and returns its exit code (a body for `--output` is already on disk).
    func present(_ report: RunReport) -> ExitCode {
        if options.printsTimings, let metrics = report.response?.metrics {
            console.err(console.styledError("timings: " + (metrics.isEmpty ? "not measured by this transport" : metrics.description), .dim))
        }
        if options.json {
            console.out(JSONReport.text(report, redaction: redaction, exitCode: report.exitCode))
        } else if options.bodyOnly {
            if options.outputFile == nil, let data = report.response?.data { writeBodyOnly(data) }
            printFailure(report)
        } else {
            printForPeople(report)
        }
        return report.exitCode
    }

    private func printForPeople(_ report: RunReport) {
        if options.verbose, let url = report.url {
            console.out(console.styled("* transport: \(report.transport)", .dim))
            if let connection = report.connectionText { console.out(console.styled("* connection: \(connection)", .dim)) }
            console.out(console.styled("> \(report.method) \(url)", .cyan))
            for (name, value) in report.requestHeaders.sorted(by: { $0.key.lowercased() < $1.key.lowercased() }) {
                console.out(console.styled("> ", .cyan) + DisplayFormat.terminalSafe("\(name): \(value)"))
            }
            console.out()
        }
        if let response = report.response, let status = report.statusText {
            let color: TextStyle = switch response.statusCode {
            case ..<300: .boldGreen
            case ..<400: .boldYellow
            default: .boldRed
            }
            console.out(console.styled("HTTP \(status)", color))
            for field in report.responseHeaders(redaction) {
                console.out(console.styled(field.name, .cyan) + ": " + DisplayFormat.terminalSafe(field.value))
            }
            console.out()
            if let body = bodyText(report) { console.out(body) }
            console.err(console.styledError("\(status) · \(DisplayFormat.duration(report.duration)) · \(DisplayFormat.byteCount(bodySize(response.data)))"
                                            + (response.attemptNumber > 1 ? " · attempt \(response.attemptNumber)" : "")
                                            + (response.metrics.certificateVerified == false ? " · " + ExchangeMetrics.verificationOffWarning : "")
                                            + " · \(report.method) \(report.url ?? "")", .dim))
        }
        printFailure(report)
    }

    /// The body's size: of the file `--output` wrote, else of `data`.
    private func bodySize(_ data: Data) -> Int {
        guard let file = options.outputFile else { return data.count }
        return (try? FileManager.default.attributesOfItem(atPath: file.path(percentEncoded: false))[.size] as? NSNumber)?.intValue ?? 0
    }

    /// The body for people: masked, JSON coloured, escaped for the terminal.
    private func bodyText(_ report: RunReport) -> String? {
        let data = report.response?.data ?? Data()
        if let file = options.outputFile { return "(\(DisplayFormat.byteCount(bodySize(data))) saved to \(file.path(percentEncoded: false)))" }
        if data.isEmpty { return nil }
        guard let text = report.responseBodyText(redaction) else {
            return console.styled("(\(DisplayFormat.byteCount(data.count)) of binary data: save it with --output FILE, or print it with --body-only)", .dim)
        }
        if DisplayFormat.prettyJSON(data) != nil { return JSONHighlighter.highlight(DisplayFormat.terminalSafe(text), console: console) }
        return DisplayFormat.terminalSafe(text.hasSuffix("\n") ? String(text.dropLast()) : text)
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
                                            + "use --output FILE or a pipe)", .dim))
            return
        }
        FileHandle.standardOutput.write(Data(DisplayFormat.terminalSafe(text).utf8))
    }

    private func printFailure(_ report: RunReport) {
        guard let error = report.errorText else { return }
        if report.error?.isCancellation == true {
            console.err(console.styledError("Cancelled: \(report.method) \(report.url ?? "")", .yellow))
        } else {
            console.fail(error)
        }
    }
}
