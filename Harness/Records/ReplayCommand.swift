@_spi(Transport) import Convey
import Foundation

/// `replay N`: sends a recorded request again.
enum ReplayCommand {
    static let command = Command(
        name: "replay",
        synopsis: "replay N|ID [options]",
        summary: "Sends recorded request N again (1 is the newest in 'recorded list') and prints the response.",
        details: """
            The method, URL, headers and body are sent as recorded. Credentials were masked when the
            request was recorded and are never stored, so a record with a masked header can only be
            replayed when you give that header again with -H; a masked URL or body cannot be
            replayed. A body must have been recorded whole (the harness keeps bodies up to 64 KB).
            --remote replaces the recorded scheme, host and port.
            """,
        options: RequestOptions.requestOptions + OutputOptions.options,
        run: run)

    private static func run(_ arguments: ParsedArguments, _ settings: HarnessSettings) async -> ExitCode {
        let console = settings.console
        guard arguments.positionals.count == 1, let which = arguments.positionals.first else {
            return console.report(UsageError(message: "replay needs one record number or ID", command: "replay"))
        }
        let overrides: Headers
        let output: OutputOptions
        let echo: TaskEchoStyle
        let timeout: Duration?
        let transport: BuiltInTransport
        let connection: ConnectionOptions
        do throws(UsageError) {
            transport = try HarnessTransport.resolve(arguments.value("transport"), command: "replay")
            connection = try ConnectionOptions(arguments, command: "replay")
            overrides = try RequestOptions.headers(arguments.all("header"), command: "replay")
            output = try OutputOptions(arguments, command: "replay")
            echo = try EchoChoice.style(arguments.value("echo"), command: "replay")
            timeout = try arguments.value("timeout").map { text throws(UsageError) in try RequestOptions.seconds(text, option: "--timeout", command: "replay") }
        } catch {
            return console.report(error)
        }
        let replay: Replay
        do {
            let (number, record) = try await RecordLookup.find(which, in: settings.recordReader())
            replay = try Replay(record: record, number: number, overrides: overrides)
        } catch {
            console.fail(error.message)
            return .localFailure
        }
        let target: RemoteTarget
        do throws(UsageError) {
            target = try arguments.value("remote").map { text throws(UsageError) in
                try RemoteTarget.resolve(text, environment: [:], command: "replay")
            } ?? RemoteTarget(origin: replay.origin)
        } catch {
            return console.report(error)
        }
        if !output.json { console.err(console.styledError("Replaying record \(replay.number): \(replay.record.method) \(replay.record.url ?? "")", .dim)) }
        return await RequestRunner.run(target: target, transport: transport, connection: connection, method: replay.method, output: output, settings: settings) { server in
            let request = ManualRequest(server: server, method: replay.method, path: replay.path, query: [],
                                        headers: replay.headers, echoStyle: echo, timeout: timeout)
            return RawManualTask(request: request, body: replay.body)
        }
    }
}
