import Foundation

/// The transports Convey makes itself for a server that was not given one
/// (`ServerConfiguration.builtInTransport`). See Docs/transports.md.
@_spi(Transport) public enum BuiltInTransport: String, Sendable, Hashable, CaseIterable {
    /// URLSession, through `URLSessionTransport`.
    case urlSession
    /// libcurl driven directly, through `CurlTransport`: Linux only; elsewhere this means URLSession.
    case curl

    /// The default: the transport the `CONVEY_TRANSPORT` environment variable names (`curl` or
    /// `urlSession`, in any case); else `curl` on Linux, where it is several times faster than
    /// URLSession, and `urlSession` everywhere else. A value that names neither is not ignored
    /// in silence: the first use writes one line to standard error saying so, and the platform's
    /// transport is used.
    public static let platformDefault: BuiltInTransport = named(byEnvironment: ProcessInfo.processInfo.environment["CONVEY_TRANSPORT"]) {
        FileHandle.standardError.write(Data(("Convey: " + $0 + "\n").utf8))
    }

    /// The transport `value` names, compared without regard to case; the platform's when it is
    /// `nil` or empty, or names none (which `warn` is told, the value escaped for a terminal).
    static func named(byEnvironment value: String?, warn: (String) -> Void) -> BuiltInTransport {
        let platforms: BuiltInTransport = BuiltInTransport.curl.isAvailable ? .curl : .urlSession
        guard let value, !value.isEmpty else { return platforms }
        if let named = allCases.first(where: { $0.rawValue.lowercased() == value.lowercased() }) { return named }
        warn("CONVEY_TRANSPORT=\(DisplayFormat.terminalSafe(value)) names no transport (curl or urlSession): using \(platforms.rawValue)")
        return platforms
    }

    /// Whether this transport exists on this platform, rather than falling back to URLSession.
    public var isAvailable: Bool {
        switch self {
        case .urlSession: true
        case .curl:
            #if os(Linux) && canImport(CConveyCurlShim)
            true
            #else
            false
            #endif
        }
    }

    /// Makes the transport for a server's configuration: a new one, with its own connections,
    /// and the configuration's `tls`, `proxy` and `httpVersion`.
    public func make(for configuration: ServerConfiguration) -> any ConveyTransport {
        #if os(Linux) && canImport(CConveyCurlShim)
        if self == .curl {
            return CurlTransport(configuration: CurlTransport.Configuration(
                tls: configuration.tls, proxy: configuration.proxy, httpVersion: configuration.httpVersion))
        }
        #endif
        return URLSessionTransport(timeout: configuration.defaultTimeout, waitsForConnectivity: configuration.waitsForConnectivity,
                                   tls: configuration.tls, proxy: configuration.proxy, httpVersion: configuration.httpVersion)
    }
}
