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
            replayed when you give that header again with -H (or -u, -b); a masked URL or body cannot be
            replayed. A body must have been recorded whole (the harness keeps bodies up to 64 KB).
            --remote replaces the recorded scheme, host and port.
            """,
        options: SendingOptions.options + OutputOptions.options,
        run: run)

    private static func run(_ arguments: ParsedArguments, _ settings: HarnessSettings) async -> ExitCode {
        let console = settings.console
        guard arguments.positionals.count == 1, let which = arguments.positionals.first else {
            return console.report(UsageError(message: "replay needs one record number or ID", command: "replay"))
        }
        let output: OutputOptions
        do throws(UsageError) {
            output = try OutputOptions(arguments, command: "replay")
        } catch {
            return console.report(error)
        }
        let found: (number: Int, record: RecordedTask)
        do {
            found = try await RecordLookup.find(which, in: settings.recordReader())
        } catch {
            console.fail(error.message)
            return .localFailure
        }
        let target: RemoteTarget
        let sending: SendingOptions
        do throws(UsageError) {
            let recorded = found.record.url.flatMap(RequestOptions.absoluteURL)
            target = try arguments.value(.remote).map { text throws(UsageError) in
                try RemoteTarget.resolve(text, environment: [:], command: "replay")
            } ?? recorded.map { RemoteTarget(origin: $0.remote) } ?? .embedded
            sending = try SendingOptions(arguments, target: recorded.flatMap { URL(string: target.remote.urlString(forPath: $0.path)) },
                                         command: "replay")
        } catch {
            return console.report(error)
        }
        let replay: Replay
        do {
            // `-H`, `-u` and `-b` give masked credentials again.
            replay = try Replay(record: found.record, number: found.number, overrides: sending.headers)
        } catch {
            console.fail(error.message)
            return .localFailure
        }
        if !output.json, !output.silent {
            console.err(console.styledError("Replaying record \(replay.number): \(replay.record.method) \(replay.record.url ?? "")", .dim))
        }
        let telemetry = sending.telemetry.session()
        let exitCode = await RequestRunner.run(target: target, sending: sending, method: replay.method, output: output, settings: settings,
                                               telemetry: telemetry) { context in
            let request = context.request(method: replay.method, path: replay.path, query: [], headers: replay.headers, sending: sending)
            return RawManualTask(request: request, body: replay.body)
        }
        await telemetry?.finish(console: console, silent: output.silent)
        return exitCode
    }
}
