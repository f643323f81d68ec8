import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a request keeps when a redirect takes it to another origin (scheme, host and port): every
/// header field but the credentials. The credentials are the fields `Redaction.standard` hides
/// (`Authorization`, `Proxy-Authorization`, `Cookie`, API-key and token headers) and those the
/// server's own `redaction` hides, so a name that echo output hides is never sent to a server its
/// owner did not name. `Redirect` applies it to every hop the pipeline follows; the cache also
/// partitions stored responses by the same fields (`CredentialPartition`).
enum CrossOriginCredentials {
    /// Whether two URLs share scheme, host and port (the default port when none is written).
    static func sameOrigin(_ first: URL, _ second: URL) -> Bool {
        first.scheme?.lowercased() == second.scheme?.lowercased()
            && first.host?.lowercased() == second.host?.lowercased()
            && effectivePort(first) == effectivePort(second)
    }

    /// Whether a request header named `name` is a credential: one `Redaction.standard` or
    /// `credentials` hides. `Set-Cookie` is a response header, hidden in output but never sent.
    static func isCredential(_ name: String, _ credentials: Redaction) -> Bool {
        guard name.caseInsensitiveCompare("Set-Cookie") != .orderedSame else { return false }
        return Redaction.standard.hidesHeader(name) || credentials.hidesHeader(name)
    }

    /// Removes the credential header fields (`isCredential`) from `request` when it goes from
    /// `source` to another origin.
    static func drop(from request: inout OutgoingRequest, goingFrom source: URL, credentials: Redaction) {
        guard !sameOrigin(source, request.url) else { return }
        for name in Set(request.fields.map(\.name)) where isCredential(name, credentials) {
            request.fields.remove(named: name)
        }
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }
}
