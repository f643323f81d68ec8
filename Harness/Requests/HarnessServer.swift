@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// The server of a manual run: a `ConveyServer` that keeps the last exchange of the run, so that
/// a run ended by a status (`-f`, or `--retry` giving up) still shows the response it got.
final class HarnessServer: ConveyServer {
    /// The last attempt's response, kept by `didFinish(task:response:error:)`.
    private(set) var lastExchange: ServerResponse<Data>?
    /// The exchanges of the current attempt, when a `-w` format asks for `num_redirects`.
    let hops: HopCounter?

    init(target: RemoteTarget, configuration: ServerConfiguration, countsHops: Bool) {
        hops = countsHops ? HopCounter() : nil
        super.init(remote: target.remote, configuration: configuration)
    }

    override func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async {
        lastExchange = response
    }
}
