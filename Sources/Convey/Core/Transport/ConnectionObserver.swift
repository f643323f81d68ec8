import Foundation

/// A connection a transport opened for requests, as a `ConnectionObserver` hears of it: where it
/// goes and the HTTP version spoken on it. Never a path, a query or a credential.
struct TransportConnection: Sendable, Hashable {
    /// The host of the request that opened it, without the brackets of an IPv6 address.
    var host: String?
    /// Its port, or the scheme's default.
    var port: Int?
    /// `http` or `https`.
    var scheme: String?
    /// The HTTP version spoken on it (`1.1`, `2`, `3`); `nil` when no response came over it
    /// before it was first reported.
    var protocolVersion: String?

    /// Whether a request uses a connection now, or it waits in the transport's pool.
    enum State: Sendable {
        case active, idle
    }

    /// The connection a request to `url` opens, before its protocol version is known.
    init(url: URL) {
        let scheme = url.scheme?.lowercased()
        self.scheme = scheme
        if var host = url.host(percentEncoded: false) {
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            self.host = host
        }
        port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
    }
}

/// Hears of the connections a transport opens, uses and closes for the requests that carry it
/// (`TransportRequest.connectionObserver`): a transport that knows its connections
/// (`CurlTransport`) reports each one to the observer of the request that opened it, for as long
/// as it is open, whichever requests use it later. A transport that does not know them reports nothing.
///
/// Called off the transport's I/O thread, one call at a time, in the order things happened to
/// each connection: opened, then any number of changes, then closed, each with the same `connection`.
protocol ConnectionObserver: Sendable {
    /// Whether each call is brief, never blocks and runs no app code, so that a transport may make
    /// it on its I/O thread rather than hand each event off to another. Default: `false`.
    var callsAreBrief: Bool { get }
    /// A connection opened, in `state`.
    func connectionOpened(_ connection: TransportConnection, state: TransportConnection.State)
    /// An open connection went from one state to the other.
    func connectionChanged(_ connection: TransportConnection, from old: TransportConnection.State, to new: TransportConnection.State)
    /// A connection in `state` closed, `openFor` after it opened.
    func connectionClosed(_ connection: TransportConnection, state: TransportConnection.State, openFor: Duration)
}

extension ConnectionObserver {
    var callsAreBrief: Bool { false }
}
