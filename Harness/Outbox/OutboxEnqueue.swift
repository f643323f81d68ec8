import Convey
import Foundation

/// `post|put|patch|delete URL … --outbox DIR`: enqueues the request in an outbox folder instead
/// of sending it, and prints the item's ID once it is on disk.
enum OutboxEnqueue {
    static let option = OptionSpec(["--outbox"], value: "DIR",
                                   help: "enqueue the request in the outbox folder DIR instead of sending it; prints the item's ID once it is on disk (see 'outbox')")

    @ConveyActor
    static func run(_ request: RequestOptions, method: HTTPMethod, folder: String, settings: HarnessSettings) async -> ExitCode {
        let console = settings.console
        guard case .remote(let remote) = request.target else {
            console.fail("--outbox needs a real server: give a full URL, or --remote with a path")
            return .usage
        }
        let server = ConveyServer(remote: remote, configuration: ServerConfiguration(echoSink: StandardErrorEchoSink()))
        do {
            let task = try request.task(on: server, method: method)
            let outbox = try await Outbox(folder: URL(filePath: folder, directoryHint: .isDirectory), server: server)
            let item = try await outbox.enqueue(task)
            console.out(item.id)
            return .ok
        } catch let failure as LocalFailure {
            console.fail(failure.message)
            return .localFailure
        } catch {
            console.fail(OutboxPrinter.describe(error))
            return error is OutboxFailure ? .localFailure : ExitCode(error: error)
        }
    }
}
