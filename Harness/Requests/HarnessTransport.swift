@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// What carries the harness's requests: for a real server, the transport an app gets by default
/// (curl on Linux, URLSession elsewhere, or `CONVEY_TRANSPORT`), unless `--transport` chooses;
/// for the embedded server, its stub.
enum HarnessTransport {
    /// The transport `--transport` names, else the one `CONVEY_TRANSPORT` names, else the
    /// platform's. A name either does not know is a usage error, never a silent default.
    static func resolve(_ text: String?, environment: [String: String], command: String) throws(UsageError) -> BuiltInTransport {
        let (given, source) = if let text { (text, "--transport") } else { (environment["CONVEY_TRANSPORT"] ?? "", "CONVEY_TRANSPORT") }
        guard !given.isEmpty else { return BuiltInTransport.curl.isAvailable ? .curl : .urlSession }
        guard let chosen = BuiltInTransport.allCases.first(where: { $0.rawValue.lowercased() == given.lowercased() }) else {
            throw UsageError(message: "\(source): '\(DisplayFormat.terminalSafe(given))' is not one of curl, urlsession", command: command)
        }
        guard chosen.isAvailable else {
            throw UsageError(message: "\(source): \(given) is not available on this platform", command: command)
        }
        return chosen
    }

    /// Gives `server` its transport: the embedded server's stub, or the chosen built-in one
    /// (through the server's configuration, whose TLS, proxy and HTTP version are set; made here
    /// for a connect timeout, which only `CurlTransport` takes). Wrapped to count each attempt's
    /// exchanges into `hops`, to report progress to `progress` and to keep each exchange in
    /// `trace`, when given.
    @ConveyActor
    static func install(on server: ConveyServer, target: RemoteTarget, builtIn: BuiltInTransport,
                        connection: ConnectionOptions = ConnectionOptions(), hops: HopCounter? = nil, progress: ProgressBar? = nil,
                        trace: ExchangeTrace? = nil) {
        server.configuration.builtInTransport = builtIn
        connection.apply(to: &server.configuration)
        if case .embedded = target {
            server.transport = StubTransport(EmbeddedHTTPBin.respond(to:))
        } else if let connectTimeout = connection.connectTimeout, builtIn == .curl {
            #if os(Linux) && canImport(CConveyCurlShim)
            server.transport = CurlTransport(configuration: CurlTransport.Configuration(
                connectTimeout: connectTimeout, tls: connection.tls, proxy: connection.proxy, httpVersion: connection.httpVersion))
            #endif
        }
        if hops != nil || progress != nil || trace != nil {
            server.transport = WatchingTransport(base: server.transport, hops: hops, bar: progress, trace: trace)
        }
    }

    /// For `--verbose` and `--output-json`: `curl`, `urlsession`, or `embedded (no network)`.
    static func name(for target: RemoteTarget, builtIn: BuiltInTransport) -> String {
        switch target {
        case .embedded: "embedded (no network)"
        case .remote: builtIn.rawValue.lowercased()
        }
    }
}

extension OptionSpec {
    static let transport = OptionSpec(["--transport"], value: "NAME", curl: .harnessOnly,
                                      help: "the transport for a real server: curl or urlsession (default: $CONVEY_TRANSPORT, else curl on Linux, urlsession elsewhere)")
}
