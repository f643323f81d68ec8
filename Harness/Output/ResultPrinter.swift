import Convey
import Foundation

/// Prints a manual run's result: for people (status line, headers, body, timing) or as JSON.
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
            if options.outputFile == nil, let data = report.response?.data { FileHandle.standardOutput.write(data) }
            printFailure(report)
        } else {
            printForPeople(report)
        }
        return report.exitCode
    }

    private func printForPeople(_ report: RunReport) {
        if options.verbose, let url = report.url {
            console.out(console.styled("> \(report.method) \(url)", .cyan))
            for (name, value) in report.requestHeaders.sorted(by: { $0.key.lowercased() < $1.key.lowercased() }) {
                console.out(console.styled("> ", .cyan) + "\(name): \(value)")
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
                console.out(console.styled(field.name, .cyan) + ": " + field.value)
            }
            console.out()
            if let body = bodyText(response.data) { console.out(body) }
            console.err(console.styledError("\(status) · \(report.duration.text) · \(ByteSize.text(bodySize(response.data)))"
                                            + (response.attemptNumber > 1 ? " · attempt \(response.attemptNumber)" : "")
                                            + " · \(report.method) \(report.url ?? "")", .dim))
        }
        printFailure(report)
    }

    /// The body's size: of the file `--output` wrote, else of `data`.
    private func bodySize(_ data: Data) -> Int {
        guard let file = options.outputFile else { return data.count }
        return (try? FileManager.default.attributesOfItem(atPath: file.path(percentEncoded: false))[.size] as? NSNumber)?.intValue ?? 0
    }

    private func bodyText(_ data: Data) -> String? {
        if let file = options.outputFile { return "(\(ByteSize.text(bodySize(data))) saved to \(file.path(percentEncoded: false)))" }
        if data.isEmpty { return nil }
        if let json = BodyText.prettyJSON(data) { return JSONHighlighter.highlight(json, console: console) }
        if let text = BodyText.text(data) { return text.hasSuffix("\n") ? String(text.dropLast()) : text }
        return console.styled("(\(ByteSize.text(data.count)) of binary data: save it with --output FILE, or print it with --body-only)", .dim)
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
