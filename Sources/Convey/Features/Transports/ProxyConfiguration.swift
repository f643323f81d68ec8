import Foundation

/// Where a transport's connections go first. See Docs/tls-and-proxies.md.
///
/// Set it on a server (`ServerConfiguration.proxy`) or on a transport
/// (`CurlTransport.Configuration.proxy`). `URLSessionTransport` follows only `.environment`
/// (FoundationNetworking's libcurl reads the variables itself); given anything else it fails
/// every request rather than bypass or use a proxy against what was asked.
public enum ProxyConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// The proxy the environment names (`http_proxy`, `https_proxy`, `all_proxy`, with
    /// `no_proxy` for exceptions), as curl reads them. The default.
    case environment
    /// No proxy, whatever the environment says.
    case direct
    /// This proxy, whatever the environment says.
    case through(Proxy)

    /// `environment`, `direct`, or the proxy without its credentials.
    public var description: String {
        switch self {
        case .environment: "environment"
        case .direct: "direct"
        case .through(let proxy): proxy.description
        }
    }
}

/// An explicit proxy: an HTTP proxy (plain `http` requests are forwarded, `https` ones tunnelled
/// with `CONNECT`) or a SOCKS5 proxy, with optional credentials and hosts to reach directly.
///
/// The password never appears in any text Convey produces: `description` and the mirror leave it out.
public struct Proxy: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The protocol spoken to the proxy.
    public enum Kind: String, Sendable, Hashable {
        /// HTTP: requests forwarded, `CONNECT` tunnels for https (and for http with `tunnelsPlainHTTP`).
        case http
        /// SOCKS5 (RFC 1928), with host names resolved by the proxy (curl's `socks5h`).
        case socks5
    }

    /// The protocol spoken to the proxy.
    public var kind: Kind
    /// The proxy's host name or address.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// The user name for the proxy (HTTP Basic, or SOCKS5 user/password); `nil` for none.
    public var username: String?
    /// The password for the proxy; never printed.
    public var password: String?
    /// Hosts reached directly, as curl's `--noproxy` reads them: exact names or addresses, a
    /// leading dot or a plain domain also matching its subdomains, `*` for every host.
    public var excludedHosts: [String]
    /// Whether plain `http` requests also go through a `CONNECT` tunnel instead of being forwarded.
    /// Default: `false` (many proxies allow `CONNECT` only to port 443).
    public var tunnelsPlainHTTP: Bool

    /// A proxy at `host:port`.
    public init(_ kind: Kind, host: String, port: Int, username: String? = nil, password: String? = nil,
                excludedHosts: [String] = [], tunnelsPlainHTTP: Bool = false) {
        self.kind = kind
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.excludedHosts = excludedHosts
        self.tunnelsPlainHTTP = tunnelsPlainHTTP
    }

    /// A proxy from its URL, as curl's `-x` takes it: `http://[user:password@]host[:port]`
    /// (port 1080 unless given) or `socks5://` / `socks5h://`; the user info is percent-decoded.
    /// A URL without a scheme is an HTTP proxy. `nil` for another scheme or no host.
    public init?(url text: String, excludedHosts: [String] = []) {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let components = URLComponents(string: withScheme), let host = components.host, !host.isEmpty else { return nil }
        let kind: Kind
        switch components.scheme?.lowercased() {
        case "http": kind = .http
        case "socks5", "socks5h": kind = .socks5
        default: return nil
        }
        self.init(kind, host: host, port: components.port ?? 1080,
                  username: components.percentEncodedUser?.removingPercentEncoding,
                  password: components.percentEncodedPassword?.removingPercentEncoding, excludedHosts: excludedHosts)
    }

    /// The proxy's address as curl takes it, without credentials: `http://host:port`, `socks5h://host:port`.
    var address: String {
        let scheme = kind == .http ? "http" : "socks5h"
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed):\(port)"
    }

    /// The address, and "with credentials" when there are any; never the password or user name.
    public var description: String {
        var text = address
        if username != nil || password != nil { text += " (with credentials)" }
        if !excludedHosts.isEmpty { text += ", not for \(excludedHosts.joined(separator: ","))" }
        return text
    }

    /// Everything but the credentials, so that `dump` and debuggers never show them.
    public var customMirror: Mirror {
        Mirror(self, children: ["kind": kind, "host": host, "port": port, "hasCredentials": username != nil || password != nil,
                                "excludedHosts": excludedHosts, "tunnelsPlainHTTP": tunnelsPlainHTTP])
    }
}

/// Which HTTP version a transport asks for.
public enum HTTPVersionPreference: String, Sendable, Hashable, CaseIterable {
    /// HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 otherwise. The default.
    case automatic
    /// HTTP/1.1 only, even when the server offers HTTP/2.
    case http1_1
    /// HTTP/2 from the first byte, without asking: cleartext `h2c` with prior knowledge on
    /// `http`, HTTP/2 without fallback on `https`. Only for servers known to speak it.
    case http2PriorKnowledge
    /// HTTP/3 (QUIC) when the libcurl the process runs has it, with fallback to the others;
    /// the same as `automatic` when it has not (see `CurlTransport.supportsHTTP3`).
    case http3
}
