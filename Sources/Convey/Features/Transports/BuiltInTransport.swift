import Foundation

/// The transports Convey makes itself for a server that was not given one
/// (`ServerConfiguration.builtInTransport`). See Docs/transports.md.
@_spi(Transport) public enum BuiltInTransport: String, Sendable, Hashable, CaseIterable {
    /// URLSession, through `URLSessionTransport`.
    case urlSession
    /// libcurl driven directly, through `CurlTransport`: Linux only; elsewhere this means URLSession.
    case curl

    /// The default: the `CONVEY_TRANSPORT` environment variable when it names a case
    /// (`curl` or `urlSession`); else `curl` on Linux, where it is several times faster than
    /// URLSession, and `urlSession` everywhere else.
    public static let platformDefault: BuiltInTransport =
        ProcessInfo.processInfo.environment["CONVEY_TRANSPORT"].flatMap(BuiltInTransport.init(rawValue:))
            ?? (BuiltInTransport.curl.isAvailable ? .curl : .urlSession)

    /// Whether this transport exists on this platform, rather than falling back to URLSession.
    public var isAvailable: Bool {
        switch self {
        case .urlSession: true
        case .curl:
            #if canImport(CConveyCurlShim)
            true
            #else
            false
            #endif
        }
    }

    /// Makes the transport for a server's configuration: a new one, with its own connections,
    /// and the configuration's `tls`, `proxy` and `httpVersion`.
    public func make(for configuration: ServerConfiguration) -> any ConveyTransport {
        #if canImport(CConveyCurlShim)
        if self == .curl {
            return CurlTransport(configuration: CurlTransport.Configuration(
                tls: configuration.tls, proxy: configuration.proxy, httpVersion: configuration.httpVersion))
        }
        #endif
        return URLSessionTransport(timeout: configuration.defaultTimeout, waitsForConnectivity: configuration.waitsForConnectivity,
                                   tls: configuration.tls, proxy: configuration.proxy)
    }
}
