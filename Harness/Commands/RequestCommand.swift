@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// `get|post|put|patch|delete PATH`: one request, sent by hand, with curl's options.
enum RequestCommand {
    static func command(for method: HTTPMethod) -> Command {
        let name = method.rawValue.lowercased()
        let example = method.forbidsBody
            ? "  convey-harness get http://127.0.0.1:8080/get -fsS -w '%{http_code}\\n' -o /dev/null"
            : "  convey-harness \(name) /\(name) --json '{\"name\": \"Ada\"}'\n  convey-harness \(name) /\(name) -F city=Zürich -F notes=@notes.txt"
        return Command(
            name: name,
            synopsis: "\(name) PATH|URL... [options]",
            summary: "Sends a \(method) request and prints the status line, headers, body and timing.",
            details: """
                PATH goes under the remote (--remote, $CONVEY_REMOTE, else the embedded server); a full
                http(s) URL chooses the server itself. Several PATHs or URLs are sent in turn, each with
                the same options and its own output, as curl does; the exit code is the last one's.
                A URL given first, without a command, is a GET ('convey-harness https://…').
                Options are curl's where curl has them, with curl's meaning ('convey-harness help options'
                lists them beside curl's). The task is recorded (see 'recorded') unless --no-record is
                given. Credentials are masked in all output.

                Examples:
                  convey-harness \(name) /\(method.forbidsBody ? "get" : name) --url-query page=2 -H 'Accept: application/json'
                \(example)
                """,
            options: RequestOptions.definingOptions + SendingOptions.options + OutputOptions.options + StreamOptions.options
                + [.outbox],
            run: { arguments, settings in
                let requests: [RequestOptions]
                let output: OutputOptions
                let streamMode: StreamOptions.Mode?
                do throws(UsageError) {
                    requests = try RequestOptions.all(arguments, method: method, command: name)
                    output = try OutputOptions(arguments, command: name)
                    streamMode = try StreamOptions.mode(arguments, command: name)
                    if requests.count > 1, let file = output.outputFile, !OutputFile.writesThrough(file) {
                        throw UsageError(message: "-o FILE takes one URL: each of \(requests.count) would replace the last (-o /dev/null is fine)",
                                         command: name)
                    }
                } catch {
                    return settings.console.report(error)
                }
                let telemetry = requests.first?.sending.telemetry.session()
                var exitCode = ExitCode.ok
                for request in requests {
                    exitCode = await run(request, output: output, streamMode: streamMode, outbox: arguments.value(.outbox), settings: settings,
                                         telemetry: telemetry)
                    if exitCode == .interrupted { break }
                }
                await telemetry?.finish(console: settings.console, silent: output.silent)
                return exitCode
            })
    }

    /// Sends, streams or enqueues one request of the command line.
    @ConveyActor
    private static func run(_ request: RequestOptions, output: OutputOptions, streamMode: StreamOptions.Mode?, outbox folder: String?,
                            settings: HarnessSettings, telemetry: TelemetrySession?) async -> ExitCode {
        if let folder {
            return await OutboxEnqueue.run(request, folder: folder, settings: settings)
        }
        if let streamMode {
            return await StreamRunner.run(target: request.target, sending: request.sending, mode: streamMode, settings: settings,
                                          telemetry: telemetry) { context throws(LocalFailure) in
                try request.task(in: context)
            }
        }
        return await RequestRunner.run(target: request.target, sending: request.sending, method: request.method, output: output,
                                       settings: settings, telemetry: telemetry) { context throws(LocalFailure) in
            try request.task(in: context)
        }
    }
}
