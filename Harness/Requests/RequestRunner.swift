@_spi(Transport) import Convey
import Foundation

/// Sends one manual task and prints its result: shared by the method commands and `replay`.
@ConveyActor
enum RequestRunner {
    /// Builds a server for `target` on `transport`, makes the task with `makeTask`, sends it, prints the result.
    static func run(target: RemoteTarget, transport: BuiltInTransport, connection: ConnectionOptions = ConnectionOptions(),
                    method: HTTPMethod, output: OutputOptions, settings: HarnessSettings,
                    makeTask: @ConveyActor (ConveyServer) throws(LocalFailure) -> any ManualTask) async -> ExitCode {
        let console = settings.console
        var configuration = ServerConfiguration(reportBadHTTPStatusAsError: false, echoSink: standardErrorEcho)
        configuration.recorder = settings.recorderForRequests()
        let server = ConveyServer(remote: target.remote, configuration: configuration)
        if let warning = connection.insecureWarning { console.err(console.styledError(warning, .yellow)) }
        HarnessTransport.install(on: server, target: target, builtIn: transport, connection: connection,
                                 progress: output.progressBar(console: console))
        let task: any ManualTask
        do {
            task = try makeTask(server)
        } catch {
            console.fail(error.message)
            return .localFailure
        }
        let started = ContinuousClock.now
        var response: ServerResponse<Data>?
        var failure: (any Error)?
        do {
            if let file = output.outputFile, isDevice(file) {
                // `-o /dev/null` and the like: written as curl does, never replaced by a downloaded file.
                let fetched = try await download(task)
                try writeBody(fetched.data, to: file)
                response = fetched.map { _ in Data() }
            } else if let file = output.outputFile {
                // Streamed to disk as it arrives; the report carries the exchange, not the body.
                response = try await task.download(to: file, resuming: output.continuesPartialFile).map { _ in Data() }
            } else {
                response = try await download(task)
            }
        } catch {
            failure = error
        }
        let elapsed = started.duration(to: .now)
        await configuration.recorder?.flush()
        if let problem = configuration.recorder?.lastWriteFailure { console.err(console.styledError("Not recorded: \(problem)", .yellow)) }
        let report = RunReport(method: method, transport: HarnessTransport.name(for: target, builtIn: transport),
                               sent: task.request.sent.request, response: response, error: failure,
                               duration: elapsed, redaction: configuration.redaction,
                               warnings: connection.insecureWarning.map { [$0] } ?? [])
        return ResultPrinter(console: console, options: output, redaction: configuration.redaction).present(report)
    }

    private static func download<Task: ManualTask>(_ task: Task) async throws -> ServerResponse<Data> {
        try await task.download()
    }

    /// Whether `file` is a character device or a FIFO, which a download would refuse to replace.
    private static func isDevice(_ file: URL) -> Bool {
        let type = (try? FileManager.default.attributesOfItem(atPath: file.path)[.type]) as? FileAttributeType
        return type == .typeCharacterSpecial || type == .typeBlockSpecial || type == .typeUnknown
    }

    private static func writeBody(_ data: Data, to file: URL) throws {
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.write(contentsOf: data)
    }
}
