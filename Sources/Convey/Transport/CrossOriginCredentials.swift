import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a request keeps when a redirect takes it to another origin (scheme, host and port): every
/// header field but the credentials. The credentials are the fields `Redaction.standard` hides
/// (`Authorization`, `Proxy-Authorization`, `Cookie`, API-key and token headers), so a name that
/// echo output hides is never sent to a server its owner did not name. Both transports and the
/// cache apply it to every hop they follow.
enum CrossOriginCredentials {
    /// Whether two URLs share scheme, host and port (the default port when none is written).
    static func sameOrigin(_ first: URL, _ second: URL) -> Bool {
        first.scheme?.lowercased() == second.scheme?.lowercased()
            && first.host?.lowercased() == second.host?.lowercased()
            && effectivePort(first) == effectivePort(second)
    }

    /// Removes the credential header fields from `request` when it goes from `source` to another origin.
    static func drop(from request: inout URLRequest, goingFrom source: URL) {
        guard let target = request.url, !sameOrigin(source, target), let fields = request.allHTTPHeaderFields else { return }
        for name in fields.keys where Redaction.standard.hidesHeader(name) {
            request.setValue(nil, forHTTPHeaderField: name)
        }
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }
}
