import Convey
import Foundation

/// What carries the harness's requests.
enum HarnessTransport {
    /// The embedded server's stub transport, or URLSession for a real server; wrapped to report
    /// progress when `progress` is given.
    static func make(for target: RemoteTarget, configuration: ServerConfiguration, progress: ProgressBar? = nil) -> any ConveyTransport {
        let transport: any ConveyTransport = switch target {
        case .embedded: StubTransport(EmbeddedHTTPBin.respond(to:))
        case .remote: URLSessionTransport(timeout: configuration.defaultTimeout, waitsForConnectivity: configuration.waitsForConnectivity)
        }
        return progress.map { ProgressReportingTransport(base: transport, bar: $0) } ?? transport
    }
}
