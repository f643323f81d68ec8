import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cookies one `URLSessionTransport` keeps: in memory, for that transport only, on every
/// platform, so an app's servers behave alike on Linux and Apple platforms.
///
/// URLSession's own cookie storage is shared by every session in the process and saved to disk
/// (FoundationNetworking: `~/.local/share/<executable>/.cookies.shared`, readable by other users;
/// Apple platforms: the app's persistent `HTTPCookieStorage.shared`), so a later process, or
/// another server's transport, would send cookies an earlier one received. Convey turns it off
/// and keeps cookies here instead, as `CurlTransport` keeps its own jar: set by responses
/// (redirects included), sent with requests whose domain, path and scheme match, never written to
/// disk. A request that sets its own `Cookie` header is sent as it is.
final class TransportCookieJar: @unchecked Sendable {  // guarded by: its NSLock, for `cookies` (HTTPCookie is immutable but not marked Sendable on every SDK)
    /// The most cookies kept; past it, the oldest go first.
    static let maximumCount = 1000

    private let lock = NSLock()
    private var cookies: [HTTPCookie] = []

    /// Keeps the cookies `response` sets; one that is already expired removes its namesake.
    func store(from response: HTTPURLResponse) {
        guard let url = response.url else { return }
        var fields: [String: String] = [:]
        for case let (name as String, value as String) in response.allHeaderFields { fields[name] = value }
        let received = HTTPCookie.cookies(withResponseHeaderFields: fields, for: url)
        guard !received.isEmpty else { return }
        let now = Date()
        lock.withLock {
            for cookie in received {
                cookies.removeAll { $0.name == cookie.name && $0.domain.lowercased() == cookie.domain.lowercased() && $0.path == cookie.path }
                if let expires = cookie.expiresDate, expires <= now { continue }
                cookies.append(cookie)
            }
            if cookies.count > Self.maximumCount { cookies.removeFirst(cookies.count - Self.maximumCount) }
        }
    }

    /// Adds a `Cookie` header with the cookies that match `request`'s URL, unless it has one.
    func addCookies(to request: inout URLRequest) {
        guard let url = request.url, request.value(forHTTPHeaderField: "Cookie") == nil else { return }
        let now = Date()
        let matching = lock.withLock { cookies.filter { Self.cookie($0, matches: url, at: now) } }
        guard !matching.isEmpty else { return }
        for (name, value) in HTTPCookie.requestHeaderFields(with: matching) { request.setValue(value, forHTTPHeaderField: name) }
    }

    /// RFC 6265 §5.4: the domain (exactly, or a subdomain of a domain cookie), the path (itself or
    /// below it), `Secure` only over https, and not expired.
    static func cookie(_ cookie: HTTPCookie, matches url: URL, at now: Date) -> Bool {
        guard let host = url.host?.lowercased() else { return false }
        if let expires = cookie.expiresDate, expires <= now { return false }
        if cookie.isSecure, url.scheme?.lowercased() != "https" { return false }
        let domain = cookie.domain.lowercased()
        let domainMatches = domain.hasPrefix(".") ? host == domain.dropFirst() || host.hasSuffix(domain) : host == domain
        guard domainMatches else { return false }
        let path = url.path.isEmpty ? "/" : url.path
        let cookiePath = cookie.path.isEmpty ? "/" : cookie.path
        return path == cookiePath || path.hasPrefix(cookiePath.hasSuffix("/") ? cookiePath : cookiePath + "/")
    }
}
