@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// `post|put|patch|delete URL … --outbox DIR`: enqueues the request in an outbox folder instead
/// of sending it, and prints the item's ID once it is on disk.
enum OutboxEnqueue {

    @ConveyActor
    static func run(_ request: RequestOptions, folder: String, settings: HarnessSettings) async -> ExitCode {
        let console = settings.console
        guard case .remote = request.target else {
            console.fail("--outbox needs a real server: give a full URL, or --remote with a path")
            return .usage
        }
        let server = HarnessServer(target: request.target, configuration: ServerConfiguration(echoSink: standardErrorEcho), countsHops: false)
        let context = RunContext(server: server, failsOnHTTPError: false, extraHeaders: Headers(), retryNotes: .unsaid)
        do {
            let task = try request.task(in: context)
            let outbox = try await Outbox(folder: URL(filePath: folder, directoryHint: .isDirectory), server: server)
            let item = try await outbox.enqueue(task)
            console.out(item.id)
            return .ok
        } catch let failure as LocalFailure {
            console.fail(failure.message)
            return .localFailure
        } catch {
            console.fail(OutboxPrinter.describe(error))
            return ExitCode(error: error)
        }
    }
}

extension OptionSpec {
    static let outbox = OptionSpec(["--outbox"], value: "DIR", curl: .harnessOnly,
                                   help: "enqueue the request in the outbox folder DIR instead of sending it; prints the item's ID once it is on disk (see 'outbox')")
}
