@_spi(Transport) import Convey
import Foundation

/// What carries the harness's requests: for a real server, the transport an app gets by default
/// (curl on Linux, URLSession elsewhere, or `CONVEY_TRANSPORT`), unless `--transport` chooses;
/// for the embedded server, its stub.
enum HarnessTransport {
    static let option = OptionSpec(["--transport"], value: "NAME",
                                   help: "the transport for a real server: curl or urlsession (default: $CONVEY_TRANSPORT, else curl on Linux, urlsession elsewhere)")

    /// The transport `--transport` names, else the platform default (which reads `CONVEY_TRANSPORT`).
    static func resolve(_ text: String?, command: String) throws(UsageError) -> BuiltInTransport {
        guard let text else { return .platformDefault }
        guard let chosen = BuiltInTransport.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) else {
            throw UsageError(message: "--transport: '\(text)' is not one of curl, urlsession", command: command)
        }
        guard chosen.isAvailable else {
            throw UsageError(message: "--transport: \(text) is not available on this platform", command: command)
        }
        return chosen
    }

    /// Gives `server` its transport: the embedded server's stub, or the chosen built-in one
    /// (through the server's configuration, with `connection`'s TLS, proxy and HTTP version); wrapped to report progress when `progress` is given.
    @ConveyActor
    static func install(on server: ConveyServer, target: RemoteTarget, builtIn: BuiltInTransport,
                        connection: ConnectionOptions = ConnectionOptions(), progress: ProgressBar? = nil) {
        server.configuration.builtInTransport = builtIn
        connection.apply(to: &server.configuration)
        if case .embedded = target { server.transport = StubTransport(EmbeddedHTTPBin.respond(to:)) }
        if let progress { server.transport = ProgressReportingTransport(base: server.transport, bar: progress) }
    }

    /// For `--verbose` and `--json`: `curl`, `urlsession`, or `embedded (no network)`.
    static func name(for target: RemoteTarget, builtIn: BuiltInTransport) -> String {
        switch target {
        case .embedded: "embedded (no network)"
        case .remote: builtIn.rawValue.lowercased()
        }
    }
}
