import Foundation

/// Where a transport's connections go first: the proxy the environment names (the default), no
/// proxy, or an explicit HTTP or SOCKS5 proxy. See Docs/tls-and-proxies.md.
///
/// ```swift
/// configuration.proxy = .http(host: "proxy.internal", port: 3128, username: "svc", password: secret)
/// configuration.proxy = ProxyConfiguration(url: "socks5://10.0.0.1:1080") ?? .direct
/// ```
///
/// Set it on a server (`ServerConfiguration.proxy`). `CurlTransport` takes all of them, and so
/// does `URLSessionTransport` on Apple platforms (SOCKS5 and `tunnelsPlainHTTP` from iOS 17 and
/// macOS 14). `URLSessionTransport` on Linux follows only `.environment` (FoundationNetworking's
/// libcurl reads the variables itself). A transport given what it cannot do fails every request
/// rather than bypass or use a proxy against what was asked.
///
/// The password never appears in any text Convey produces: `description` and the mirror leave it
/// out, and the user name too.
public struct ProxyConfiguration: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// Where connections go.
    enum Route: Sendable, Hashable {
        /// The environment's proxy.
        case environment
        /// No proxy.
        case direct
        /// This proxy.
        case through(Proxy)
    }

    /// Where connections go: set by the constructor used.
    let route: Route

    private init(_ route: Route) {
        self.route = route
    }

    /// The proxy the environment names (`http_proxy`, `https_proxy`, `all_proxy`, with
    /// `no_proxy` for exceptions), as curl reads them. The default.
    public static let environment = ProxyConfiguration(.environment)

    /// No proxy, whatever the environment says.
    public static let direct = ProxyConfiguration(.direct)

    /// An HTTP proxy at `host:port`: plain `http` requests are forwarded, `https` ones tunnelled
    /// with `CONNECT`, whatever the environment says.
    ///
    /// - Parameters:
    ///   - host: the proxy's host name or address.
    ///   - port: the proxy's port.
    ///   - username: the user name for the proxy's HTTP Basic authentication; `nil` for none.
    ///   - password: its password; never printed.
    ///   - excludedHosts: hosts reached directly, as curl's `--noproxy` reads them, on every port:
    ///     a name also matching its subdomains (`example.com`, `.example.com`), an IP address or
    ///     network (`10.0.0.0/8`, `::1`), `*` for every host. An entry with a port or a wildcard
    ///     inside a name fails every request, before anything is sent, naming it.
    ///   - tunnelsPlainHTTP: whether plain `http` requests also go through a `CONNECT` tunnel
    ///     instead of being forwarded (many proxies allow `CONNECT` only to port 443).
    public static func http(host: String, port: Int, username: String? = nil, password: String? = nil,
                            excludedHosts: [String] = [], tunnelsPlainHTTP: Bool = false) -> ProxyConfiguration {
        ProxyConfiguration(.through(Proxy(.http, host: host, port: port, username: username, password: password,
                                          excludedHosts: excludedHosts, tunnelsPlainHTTP: tunnelsPlainHTTP)))
    }

    /// A SOCKS5 proxy (RFC 1928) at `host:port`, which resolves host names itself (curl's
    /// `socks5h`), with optional user and password and hosts reached directly (as for `http`).
    public static func socks5(host: String, port: Int, username: String? = nil, password: String? = nil,
                              excludedHosts: [String] = []) -> ProxyConfiguration {
        ProxyConfiguration(.through(Proxy(.socks5, host: host, port: port, username: username, password: password,
                                          excludedHosts: excludedHosts)))
    }

    /// A proxy from its URL, as curl's `-x` takes it: `http://[user:password@]host[:port]`
    /// (port 1080 unless given) or `socks5://` / `socks5h://`; the user info is percent-decoded.
    /// A URL without a scheme is an HTTP proxy. `nil` for another scheme or no host.
    public init?(url text: String, excludedHosts: [String] = []) {
        guard let proxy = Proxy(url: text, excludedHosts: excludedHosts) else { return nil }
        self.init(.through(proxy))
    }

    /// An explicit proxy.
    static func through(_ proxy: Proxy) -> ProxyConfiguration {
        ProxyConfiguration(.through(proxy))
    }

    /// Why no request can go out with this setting, whatever the transport, or `nil`: an
    /// excluded host that is refused (see `ExcludedProxyHosts`).
    var unusableReason: String? {
        guard case .through(let proxy) = route, case .failure(let refusal) = proxy.excluded else { return nil }
        return refusal.description
    }

    /// `environment`, `direct`, or the proxy's address without its credentials.
    public var description: String {
        switch route {
        case .environment: "environment"
        case .direct: "direct"
        case .through(let proxy): proxy.description
        }
    }

    /// The description, so that `dump` and debuggers never show the credentials.
    public var customMirror: Mirror {
        Mirror(self, children: ["proxy": description])
    }
}

/// An explicit proxy (`ProxyConfiguration.http`, `.socks5`, `init?(url:)`): an HTTP proxy
/// (plain `http` requests are forwarded, `https` ones tunnelled with `CONNECT`) or a SOCKS5
/// proxy, with optional credentials and hosts to reach directly.
///
/// The password never appears in any text Convey produces: `description` and the mirror leave it out.
struct Proxy: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The protocol spoken to the proxy.
    enum Kind: String, Sendable, Hashable {
        /// HTTP: requests forwarded, `CONNECT` tunnels for https (and for http with `tunnelsPlainHTTP`).
        case http
        /// SOCKS5 (RFC 1928), with host names resolved by the proxy (curl's `socks5h`).
        case socks5
    }

    /// The protocol spoken to the proxy.
    var kind: Kind
    /// The proxy's host name or address.
    var host: String
    /// The proxy's port.
    var port: Int
    /// The user name for the proxy (HTTP Basic, or SOCKS5 user/password); `nil` for none.
    var username: String?
    /// The password for the proxy; never printed.
    var password: String?
    /// Hosts reached directly, as curl's `--noproxy` reads them: exact names or addresses, a
    /// leading dot or a plain domain also matching its subdomains, `*` for every host.
    var excludedHosts: [String]
    /// Whether plain `http` requests also go through a `CONNECT` tunnel instead of being forwarded.
    /// Default: `false` (many proxies allow `CONNECT` only to port 443).
    var tunnelsPlainHTTP: Bool

    /// A proxy at `host:port`.
    init(_ kind: Kind, host: String, port: Int, username: String? = nil, password: String? = nil,
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
    init?(url text: String, excludedHosts: [String] = []) {
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

    /// The excluded hosts, read as curl reads them (see `ExcludedProxyHosts`), or why one is refused.
    var excluded: Result<ExcludedProxyHosts, ExcludedProxyHosts.Refusal> {
        Result { () throws(ExcludedProxyHosts.Refusal) in try ExcludedProxyHosts(excludedHosts) }
    }

    /// The address, and "with credentials" when there are any; never the password or user name.
    var description: String {
        var text = address
        if username != nil || password != nil { text += " (with credentials)" }
        if !excludedHosts.isEmpty { text += ", not for \(excludedHosts.joined(separator: ","))" }
        return text
    }

    /// Everything but the credentials, so that `dump` and debuggers never show them.
    var customMirror: Mirror {
        Mirror(self, children: ["kind": kind, "host": host, "port": port, "hasCredentials": username != nil || password != nil,
                                "excludedHosts": excludedHosts, "tunnelsPlainHTTP": tunnelsPlainHTTP])
    }
}
