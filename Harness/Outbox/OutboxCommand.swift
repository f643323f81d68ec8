@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// `outbox run|list|retry|drop DIR [ID]`: works an outbox folder by hand.
enum OutboxCommand {
    static let command = Command(
        name: "outbox",
        synopsis: "outbox run|list|retry|drop DIR [ID] [options]",
        summary: "Delivers, lists, retries or drops the requests waiting in an outbox folder.",
        details: """
            Requests get into an outbox with --outbox: convey-harness post URL -d DATA --outbox DIR.

              run DIR      delivers the pending items, retrying as the outbox does, and prints each
                           outcome. Exits 0 when none is left pending, 2 if any item is failed,
                           4 if some are still pending (after --once). -H supplies fields at send
                           time: that is how credentials reach queued items, which never store them.
              list DIR     shows each item's ID, method, URL, state, attempts, key and last error,
                           and the damaged files set aside.
              retry DIR ID makes a failed item pending again (same key).
              drop DIR ID  removes an item, whatever its state.

            Another process delivering from DIR owns it: 'run' waits for it; 'retry' and 'drop' fail.

            Examples:
              convey-harness outbox run ./outbox -H 'Authorization: Bearer $TOKEN'
              convey-harness outbox list ./outbox --json
            """,
        options: [.header, .outboxOnce, .outboxConcurrency, .transport, .echo, .outboxListJSON],
        run: { arguments, settings in await run(arguments, settings: settings) })

    @ConveyActor
    private static func run(_ arguments: ParsedArguments, settings: HarnessSettings) async -> ExitCode {
        let console = settings.console
        let positionals = arguments.positionals
        guard let action = positionals.first, ["run", "list", "retry", "drop"].contains(action) else {
            return console.report(UsageError(message: "outbox needs one of run, list, retry, drop", command: "outbox"))
        }
        let wantsID = action == "retry" || action == "drop"
        guard positionals.count == (wantsID ? 3 : 2) else {
            return console.report(UsageError(message: "usage: outbox \(action) DIR\(wantsID ? " ID" : "")", command: "outbox"))
        }
        let path = positionals[1]
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
            console.fail("no outbox folder at \(path)")
            return .localFailure
        }
        let folder = URL(filePath: path, directoryHint: .isDirectory)
        let server: OutboxRunServer
        var configuration = Outbox.Configuration()
        do throws(UsageError) {
            let fields = try SendingOptions.headers(arguments.all(.header), command: "outbox").headers
            let transport = try HarnessTransport.resolve(arguments.value(.transport), environment: ProcessInfo.processInfo.environment,
                                                         command: "outbox")
            let echo = try EchoChoice.style(arguments.value(.echo), command: "outbox")
            if let text = arguments.value(.outboxConcurrency) {
                guard let count = Int(text), (1...64).contains(count) else {
                    throw UsageError(message: "--concurrency: '\(text)' is not a number from 1 to 64", command: "outbox")
                }
                configuration.concurrency = count
            }
            var serverConfiguration = ServerConfiguration(defaultEchoStyle: settings.records ? echo : echo.subtracting(.recorded),
                                                          echoSink: standardErrorEcho)
            serverConfiguration.recorder = settings.recorderForRequests()
            serverConfiguration.builtInTransport = transport
            server = OutboxRunServer(fields: fields, configuration: serverConfiguration)
        } catch {
            return console.report(error)
        }
        let printer = OutboxPrinter(console: console)
        do {
            let outbox = try await Outbox(folder: folder, server: server, configuration: configuration)
            switch action {
            case "list":
                printer.list(outbox.items, damaged: outbox.damagedFiles, json: arguments.has(.outboxListJSON))
                return .ok
            case "retry":
                let item = try await outbox.retry(positionals[2])
                console.out("\(item.id) pending again")
                return .ok
            case "drop":
                try await outbox.drop(positionals[2])
                console.out("\(positionals[2]) dropped")
                return .ok
            default:
                return try await deliver(outbox, once: arguments.has(.outboxOnce), server: server, printer: printer)
            }
        } catch {
            if error.isCancellation { return .interrupted }
            console.fail(OutboxPrinter.describe(error))
            return .localFailure
        }
    }

    /// `outbox run`: delivers, printing each outcome as it comes.
    @ConveyActor
    private static func deliver(_ outbox: Outbox, once: Bool, server: ConveyServer, printer: OutboxPrinter) async throws -> ExitCode {
        let changes = outbox.changes()
        // Outcomes of this run's own attempts: another process may have delivered items meanwhile,
        // which the outbox reports as changes too, but they are not this run's to print.
        var lastAttempts = Dictionary(outbox.items.map { ($0.id, $0.attempts) }, uniquingKeysWith: { first, _ in first })
        let reporter = Task { @ConveyActor in
            var attemptedHere: Set<String> = []
            for await item in changes {
                if item.isFinished {
                    let expired = if case .failed(ConveyError.expired) = item.state { true } else { false }
                    if attemptedHere.contains(item.id) || expired { printer.outcome(item) }
                } else if item.attempts > lastAttempts[item.id, default: 0] {
                    attemptedHere.insert(item.id)
                }
                if !item.isFinished, let error = item.lastError, item.nextAttemptAt != nil, lastAttempts[item.id] != item.attempts {
                    lastAttempts[item.id] = item.attempts
                    printer.retrying(item, error: error)
                }
            }
        }
        defer { reporter.cancel() }
        let result: Result<Void, any Error>
        do {
            try await outbox.deliverPending(once: once)
            result = .success(())
        } catch {
            result = .failure(error)
        }
        await server.configuration.recorder?.flush()
        // Let the reporter print what is already in its stream: it runs on this actor, and each
        // yield hands it the actor (no clock is involved).
        for _ in 0..<100 { await Task.yield() }
        try result.get()
        let items = outbox.items
        if items.contains(where: { if case .failed = $0.state { true } else { false } }) { return .clientError }
        if items.contains(where: { !$0.isFinished }) { return .noResponse }
        return .ok
    }
}

/// The server `outbox run` delivers with: no remote of its own (items hold absolute URLs), and
/// the `-H` fields added to every attempt as the server's own headers, at send time.
final class OutboxRunServer: ConveyServer {
    let fields: Headers

    init(fields: Headers, configuration: ServerConfiguration) {
        self.fields = fields
        super.init(remote: nil, configuration: configuration)
    }

    override func headers(for task: any DownloadingTask) async throws -> Headers { fields }
}

extension OptionSpec {
    static let outboxOnce = OptionSpec(["--once"], curl: .harnessOnly, help: "outbox run: try each pending item once, now, then stop")
    static let outboxConcurrency = OptionSpec(["--concurrency"], value: "N", curl: .harnessOnly,
                                              help: "outbox run: send up to N items at once, out of order (default 1, in order)")
    static let outboxListJSON = OptionSpec(["--json"], curl: .harnessOnly, help: "outbox list: print JSON")
}
