import Foundation

/// What a server is to the tasks run against it: where they go, the settings they run with, the
/// headers they carry and what happens when they finish.
///
/// `ConveyServer` is the implementation: subclass it for your app rather than conforming to
/// this protocol yourself. The protocol names the behaviour so that code can depend on it, for
/// example a helper that reads a server's `remote` and `configuration`.
@ConveyActor
public protocol ConveyServerable: AnyObject, Sendable {
    /// A name for logs and errors.
    var name: String { get }
    /// The environment tasks are sent to.
    var remote: Remote? { get set }
    /// Settings for every task run against this server.
    var configuration: ServerConfiguration { get set }
    /// When `true`, every task fails at once and nothing is sent.
    var disabled: Bool { get set }
    /// What carries requests.
    @_spi(Transport) var transport: any ConveyTransport { get set }
    /// Headers for a task, layered over `configuration.defaultHeaders`.
    func headers(for task: any DownloadingTask) async throws -> Headers
    /// Refreshes credentials after a 401; `true` retries the task once.
    func refreshCredentials(after error: HTTPError) async throws -> Bool
    /// Called exactly once per task run, whatever it delivers, after the task's `didSucceed(with:)` or `didFail(with:)`.
    func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async
}
