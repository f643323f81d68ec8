import Convey
import Foundation

/// Prints a manual run's result: for people (status line, headers, body, timing) or as JSON.
struct ResultPrinter {
    let console: Console
    let options: OutputOptions
    let redaction: Redaction

    /// Prints the report and returns the exit code: the report's, or a local failure when the
    /// body could not be saved.
    func present(_ report: RunReport) -> ExitCode {
        var exitCode = report.exitCode
        if let file = options.outputFile, let data = report.response?.data {
            do {
                try data.write(to: file)
            } catch {
                console.fail("--output: cannot write \(file.path(percentEncoded: false)): \(error.localizedDescription)")
                exitCode = .localFailure
            }
        }
        if options.json {
            console.out(JSONReport.text(report, redaction: redaction, exitCode: exitCode))
        } else if options.bodyOnly {
            if options.outputFile == nil, let data = report.response?.data { FileHandle.standardOutput.write(data) }
            printFailure(report)
        } else {
            printForPeople(report)
        }
        return exitCode
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
            console.err(console.styledError("\(status) · \(report.duration.text) · \(ByteSize.text(response.data.count))"
                                            + (response.attemptNumber > 1 ? " · attempt \(response.attemptNumber)" : "")
                                            + " · \(report.method) \(report.url ?? "")", .dim))
        }
        printFailure(report)
    }

    private func bodyText(_ data: Data) -> String? {
        if let file = options.outputFile { return "(\(ByteSize.text(data.count)) saved to \(file.path(percentEncoded: false)))" }
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
