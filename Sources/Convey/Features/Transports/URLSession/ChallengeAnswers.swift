import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What answers a transport's TLS and proxy challenges, prepared once, when it is made (Apple
/// platforms; on Linux, FoundationNetworking sends no such challenge and this is empty).
struct ChallengeAnswers: @unchecked Sendable {  // guarded by: nothing to guard: made once with the transport, never changed after
    // URLCredential is immutable once made; it is not marked Sendable.
    #if canImport(Darwin)
    /// The server-trust evaluation, when `tls` asks for more than the system's default handling.
    var serverTrust: SecurityTrustEvaluator?
    /// The identity presented when a server asks for a client certificate, or `nil` for none.
    var clientCertificate: URLCredential?
    /// The user and password for an HTTP proxy's 407 challenge, or `nil` for none.
    var proxy: URLCredential?
    #endif
}

extension ChallengeAnswers {
    /// The certificates a client presents after its own: the chain a PKCS#12 bundle holds, in its
    /// order, less the identity's own certificate (`leaf`, by DER; the chain's first when it is
    /// not known), which `URLCredential` takes from the identity. Without them a server that
    /// trusts only the root cannot link a certificate issued by an intermediate to it.
    static func chainLessLeaf<Certificate>(_ chain: [Certificate], leaf: Data?, der: (Certificate) -> Data) -> [Certificate] {
        guard let leaf else { return Array(chain.dropFirst()) }
        return chain.filter { der($0) != leaf }
    }
}
