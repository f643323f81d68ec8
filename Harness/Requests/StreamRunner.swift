@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// Sends one manual task and prints its response as it arrives: lines (`--stream`) or
/// server-sent events (`--events`). Ctrl-C ends the transfer and exits with 130.
@ConveyActor
enum StreamRunner {
    static func run(target: RemoteTarget, sending: SendingOptions, mode: StreamOptions.Mode, settings: HarnessSettings,
                    telemetry: TelemetrySession?, makeTask: @ConveyActor (RunContext) throws(LocalFailure) -> any ManualTask) async -> ExitCode {
        let console = settings.console
        let retryNotes = RetryNotes(followsEcho: sending.echo.printsToConsole) { notice in
            console.err(console.styledError(notice, .yellow))
        }
        var configuration = ServerConfiguration(reportBadHTTPStatusAsError: false, echoSink: retryNotes.echoSink(writing: standardErrorEcho))
        sending.apply(to: &configuration)
        telemetry?.apply(to: &configuration)
        let server = HarnessServer(target: target, configuration: configuration, countsHops: false)
        for warning in (sending.connection.insecureWarning.map { [$0] } ?? []) + sending.warnings {
            console.err(console.styledError(warning, .yellow))
        }
        HarnessTransport.install(on: server, target: target, builtIn: sending.transport, connection: sending.connection)
        let context = RunContext(server: server, failsOnHTTPError: false, extraHeaders: Headers(), retryNotes: retryNotes)
        let task: any ManualTask
        do {
            task = try makeTask(context)
        } catch {
            console.fail(error.message)
            return .localFailure
        }
        do {
            let exitCode = try await sending.telemetry.scope {
                try await sending.har.scope {
                    switch mode {
                    case .lines: try await printLines(of: task, console: console, redaction: configuration.redaction)
                    case .events: try await printEvents(of: task, console: console, redaction: configuration.redaction)
                    }
                }
            }
            telemetry?.finishRun(console: console)
            return exitCode
        } catch {
            telemetry?.finishRun(console: console)
            if case ConveyError.cancelled? = error as? ConveyError {
                console.err(console.styledError("Interrupted", .yellow))
                return .interrupted
            }
            console.fail(configuration.redaction.maskedText(String(describing: error)))
            if let status = (error as? HTTPError)?.statusCode { return ExitCode(status: status) }
            switch error as? ConveyError {
            case .noRecordedAnswer?, .harFileUnusable?: return .localFailure
            default: return .noResponse
            }
        }
    }

    /// Headers masked and lines masked as Convey's echo masks text, all escaped for the terminal.
    private static func printLines<Task: ManualTask>(of task: Task, console: Console, redaction: Redaction) async throws -> ExitCode {
        let response = try await task.stream()
        console.err(console.styledError("\(response.head.httpVersion) \(response.statusCode) \(HTTPStatus.reasonPhrase(for: response.statusCode))", .bold))
        for field in redaction.maskedFields(response.headerFields) {
            console.err(console.styledError("\(field.name): ", .cyan) + DisplayFormat.terminalSafe(field.value))
        }
        console.err("")
        var lines = 0
        for try await line in response.payload.lines {
            console.out(DisplayFormat.terminalSafe(redaction.maskedText(line)))
            lines += 1
        }
        console.err(console.styledError("\(lines) line\(lines == 1 ? "" : "s")", .dim))
        return ExitCode(status: response.statusCode)
    }

    /// Each event's data masked as Convey's echo masks text, all escaped for the terminal.
    private static func printEvents<Task: ManualTask>(of task: Task, console: Console, redaction: Redaction) async throws -> ExitCode {
        var count = 0
        for try await event in task.events() {
            count += 1
            let id = event.id.isEmpty ? "" : " id=\(event.id)"
            let data = DisplayFormat.terminalSafe(redaction.maskedText(event.data))
            console.out(console.styled("[\(event.type)\(id)]", .cyan) + " " + data.replacingOccurrences(of: "\n", with: "\n    "))
        }
        console.err(console.styledError("\(count) event\(count == 1 ? "" : "s"); the server ended the stream (204)", .dim))
        return .ok
    }
}
