@_spi(Transport) import Convey
import Foundation

/// What the runner hands the code that makes a run's task.
struct RunContext: Sendable {
    let server: HarnessServer
    /// `-f`: a status of 400 or more ends the run (and writes no file).
    let failsOnHTTPError: Bool
    /// Fields the run adds to the request: `Range` for `-C`.
    let extraHeaders: Headers
    /// Whether the run asks for a range: its 416 is never an error (curl takes it as "nothing left").
    var asksForRange: Bool { extraHeaders.contains(named: "Range") }
    /// Says each retry, after the echo of the attempt it follows.
    let retryNotes: RetryNotes

    /// A request for the context's server, sent as `sending` says, with the run's own fields added.
    func request(method: HTTPMethod, path: String, query: [URLQueryItem], headers: Headers, sending: SendingOptions) -> ManualRequest {
        var headers = headers
        headers.append(contentsOf: extraHeaders)
        var request = ManualRequest(server: server, method: method, path: path, query: query, headers: headers, sending: sending,
                                    failsOnHTTPError: failsOnHTTPError, retryNotes: retryNotes)
        if asksForRange { request.statusRule = request.statusRule.returning(416) }
        return request
    }
}

/// Sends one manual task and prints its result: shared by the method commands and `replay`.
@ConveyActor
enum RequestRunner {
    /// Builds a server for `target`, makes the task with `makeTask`, sends it, prints the result;
    /// its spans and measurements go to `telemetry`, which the invocation's runs share.
    static func run(target: RemoteTarget, sending: SendingOptions, method: HTTPMethod, output: OutputOptions, settings: HarnessSettings,
                    telemetry: TelemetrySession?,
                    makeTask: @ConveyActor (RunContext) throws(LocalFailure) -> any ManualTask) async -> ExitCode {
        let console = settings.console
        let retryNotes = RetryNotes(followsEcho: sending.echo.printsToConsole) { [console, silent = output.silent] notice in
            if !silent { console.err(console.styledError(notice, .yellow)) }
        }
        var configuration = ServerConfiguration(reportBadHTTPStatusAsError: false, echoSink: retryNotes.echoSink(writing: standardErrorEcho))
        configuration.recorder = settings.recorderForRequests()
        sending.apply(to: &configuration)
        telemetry?.apply(to: &configuration)
        let server = HarnessServer(target: target, configuration: configuration, countsHops: output.writeOut?.countsRedirects == true)
        let warnings = (sending.connection.insecureWarning.map { [$0] } ?? []) + sending.warnings
        if !output.silent {
            for warning in warnings { console.err(console.styledError(warning, .yellow)) }
        }
        let transportName = HarnessTransport.name(for: target, builtIn: sending.transport)
        let trace = exchangeTrace(output: output, console: console, redaction: configuration.redaction, transport: transportName)
        HarnessTransport.install(on: server, target: target, builtIn: sending.transport, connection: sending.connection,
                                 hops: server.hops, progress: output.progressBar(console: console), trace: trace)
        let plan = RangeResume.plan(output.resume, file: output.outputFile)
        var extraHeaders = Headers()
        if case .from(let offset) = plan { extraHeaders.append(Header(name: "Range", value: "bytes=\(offset)-")) }
        let context = RunContext(server: server, failsOnHTTPError: output.fail == .withoutBody, extraHeaders: extraHeaders,
                                 retryNotes: retryNotes)
        let task: any ManualTask
        do {
            task = try makeTask(context)
        } catch {
            if output.showsErrors { console.fail(error.message) }
            return .localFailure
        }
        let started = ContinuousClock.now
        var response: ServerResponse<Data>?
        var failure: (any Error)?
        var destination = BodyDestination.shown
        var resumeComplete = false
        do {
            let sent = try await sending.telemetry.scope { try await sending.har.scope { try await send(task, plan: plan, output: output) } }
            response = sent.response
            destination = sent.destination
            failure = sent.failure
            resumeComplete = sent.resumeComplete
        } catch let http as HTTPError where server.lastExchange?.statusCode == http.statusCode {
            // A status that `-f` or `--retry` made an error: the response is still the run's outcome,
            // and without `-f` its body goes where any body goes (the library kept it in memory).
            response = server.lastExchange
            if output.fail != nil {
                failure = http
            } else if let file = output.outputFile, let data = response?.data {
                do {
                    try store(data, in: file)
                    destination = .file(file)
                } catch {
                    failure = error
                }
            }
        } catch {
            failure = error
        }
        let elapsed = started.duration(to: .now)
        retryNotes.sayWaiting()
        await configuration.recorder?.flush()
        if let problem = configuration.recorder?.lastWriteFailure, output.showsErrors {
            console.err(console.styledError("Not recorded: \(problem)", .yellow))
        }
        let report = RunReport(method: method, transport: transportName, sent: task.request.sent.request, intended: task.request.url,
                               sentHead: trace?.lastExchange?.sentHead, response: response, error: failure,
                               duration: elapsed, redaction: configuration.redaction, warnings: warnings, fail: output.fail,
                               resumeComplete: resumeComplete)
        let printer = ResultPrinter(console: console, options: output, redaction: configuration.redaction, destination: destination)
        let exitCode = printer.present(report, exchanges: server.hops?.exchanges)
        telemetry?.finishRun(console: console)
        return exitCode
    }

    /// The trace `-v` prints each exchange of (from the transport's first line on) and
    /// `--output-json` reads the last request head from; `nil` when neither is asked for.
    private static func exchangeTrace(output: OutputOptions, console: Console, redaction: Redaction, transport: String) -> ExchangeTrace? {
        guard output.verbose else { return output.json ? ExchangeTrace() : nil }
        let printer = VerbosePrinter(console: console, redaction: redaction, transport: transport)
        printer.printTransport()
        return ExchangeTrace { exchange in printer.print(exchange) }
    }

    /// What sending a run's task came to.
    private struct Sent {
        var response: ServerResponse<Data>
        /// Where the body went.
        var destination = BodyDestination.shown
        /// A response that is a failure all the same: `ResumeRefused`.
        var failure: (any Error)?
        /// `-C` asked for a range past the end: the 416 says the file is whole, as curl takes it.
        var resumeComplete = false
    }

    /// Runs the task as `plan` and `output` say.
    private static func send(_ task: any ManualTask, plan: RangeResume.Plan, output: OutputOptions) async throws -> Sent {
        switch (plan, output.outputFile) {
        case (.from, let file):
            // The rest of a body: held in memory, then appended to the file (or printed), as curl does.
            let fetched = try await download(task)
            switch fetched.statusCode {
            case 206:
                guard let file else { return Sent(response: fetched) }
                if OutputFile.writesThrough(file) {
                    try OutputFile.writeThrough(fetched.data, to: file)
                } else {
                    try OutputFile.write(fetched.data, to: file, appending: true)
                }
                return Sent(response: fetched, destination: .file(file))
            case 200:
                return Sent(response: fetched, destination: .dropped, failure: ResumeRefused(status: 200))
            case 416:
                // Nothing left to fetch: curl drops the answer's body and succeeds.
                return Sent(response: fetched, destination: .dropped, resumeComplete: true)
            default:
                return Sent(response: fetched)
            }
        case (_, let file?) where OutputFile.writesThrough(file):
            // `-o /dev/null`, `-o /dev/stdout` and the like: written as curl does, never replaced by a downloaded file.
            let fetched = try await download(task)
            try store(fetched.data, in: file)
            return Sent(response: fetched, destination: .file(file))
        case (_, let file?):
            // Streamed to disk as it arrives; the response's body is empty, the file holds it.
            let response = try await task.download(to: file, resuming: plan == .partialFile)
            return Sent(response: response.map { _ in Data() }, destination: .file(file))
        case (_, nil):
            return Sent(response: try await download(task))
        }
    }

    private static func download<Task: ManualTask>(_ task: Task) async throws -> ServerResponse<Data> {
        try await task.download()
    }

    /// Writes a body held in memory to `file`, as `OutputFile` writes to it.
    private static func store(_ data: Data, in file: URL) throws(LocalFailure) {
        if OutputFile.writesThrough(file) {
            try OutputFile.writeThrough(data, to: file)
        } else {
            try OutputFile.write(data, to: file, appending: false)
        }
    }
}
