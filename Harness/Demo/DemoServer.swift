@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// The demo's server: a `ConveyServer` subclass that logs its hooks, as an app's would run them.
final class DemoServer: ConveyServer {
    let hooks: HookLog

    init(target: RemoteTarget, configuration: ServerConfiguration, hooks: HookLog) {
        self.hooks = hooks
        super.init(remote: target.remote, configuration: configuration)
    }

    override func headers(for task: any DownloadingTask) async throws -> Headers {
        hooks.add("server.headers(for:)", "\(type(of: task)) → X-Demo: convey-harness")
        return ["X-Demo": "convey-harness"]
    }

    override func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async {
        hooks.add("server.didFinish", error.map { "failed: " + DemoText.errorName($0) } ?? "succeeded")
    }
}
