import Convey
import Foundation

/// What carries the harness's requests.
enum HarnessTransport {
    /// The embedded server's stub transport, or the configuration's built-in transport for a real
    /// server (curl on Linux, URLSession elsewhere, or `CONVEY_TRANSPORT`); wrapped to report
    /// progress when `progress` is given.
    static func make(for target: RemoteTarget, configuration: ServerConfiguration, progress: ProgressBar? = nil) -> any ConveyTransport {
        let transport: any ConveyTransport = switch target {
        case .embedded: StubTransport(EmbeddedHTTPBin.respond(to:))
        case .remote: configuration.builtInTransport.make(for: configuration)
        }
        return progress.map { ProgressReportingTransport(base: transport, bar: $0) } ?? transport
    }
}
