import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which credentials a request carries, as the cache sees them: stored responses live in one
/// partition per set of credentials, and a request is answered only from its own partition.
///
/// The credentials are every header that `Redaction.standard` or the server's own `redaction`
/// hides (`Authorization`, `Proxy-Authorization`, `Cookie`, API-key and token headers, and any
/// header an app adds to its `Redaction`), plus the user name and password of the URL. A request
/// with none of them is in the anonymous partition (`tag` is `nil`). The tag is an HMAC-SHA-256
/// of those values under the cache's secret key (`CachePartitionKey`), so no credential is kept,
/// in memory or on disk, and a tag cannot be tested against a guessed credential without the key.
struct CredentialPartition: Sendable, Hashable {
    /// The partition's name: 64 hex digits, or `nil` for requests without credentials.
    let tag: String?

    /// The anonymous partition.
    static let anonymous = CredentialPartition(tag: nil)

    /// The partition of `request`, with `credentials` naming the credential headers beyond the standard ones.
    init(of request: OutgoingRequest, credentials: Redaction, key: [UInt8]) {
        var material: [UInt8] = []
        let fields = request.allHTTPHeaderFields.sorted { $0.key.lowercased() < $1.key.lowercased() }
        for (name, value) in fields where CrossOriginCredentials.isCredential(name, credentials) {
            material += Array("\(name.lowercased()): \(value)\n".utf8)
        }
        if case let url = request.url, url.user != nil || url.password != nil,
           let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
           components.percentEncodedUser != nil || components.percentEncodedPassword != nil {
            material += Array("userinfo: \(components.percentEncodedUser ?? ""):\(components.percentEncodedPassword ?? "")\n".utf8)
        }
        tag = material.isEmpty ? nil : SHA256.authenticationCode(key: key, message: material)
    }

    private init(tag: String?) { self.tag = tag }
}
