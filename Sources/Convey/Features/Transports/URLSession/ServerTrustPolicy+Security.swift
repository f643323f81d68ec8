#if canImport(Security) && canImport(Darwin)
import Foundation
import Security

/// The Security framework's part of answering a server-trust challenge (Apple platforms only):
/// evaluate the chain with the policy's anchors, copy it as DER, and let `ServerTrustPolicy`
/// decide. Nothing else happens here.
struct SecurityTrustEvaluator: @unchecked Sendable {  // guarded by: nothing to guard: immutable, its anchors made once in init
    // `SecCertificate` is immutable and thread-safe, but not marked Sendable.
    let policy: ServerTrustPolicy
    /// The anchors as the Security framework takes them, made once.
    private let anchors: [SecCertificate]

    /// `nil` when an anchor's DER is refused by the Security framework (it was read by
    /// `CertificateFile`, so this means the system disagrees about it).
    init?(policy: ServerTrustPolicy) {
        let anchors = policy.anchors.compactMap { SecCertificateCreateWithData(nil, Data($0) as CFData) }
        guard anchors.count == policy.anchors.count else { return nil }
        self.policy = policy
        self.anchors = anchors
    }

    /// Evaluates `trust` for `host` as the policy says, and decides. Blocks while the system
    /// evaluates (it may fetch intermediates or revocation): call it on URLSession's delegate
    /// queue, never the main thread.
    func decide(_ trust: SecTrust, host: String) -> ServerTrustPolicy.Decision {
        var evaluation = ServerTrustPolicy.Evaluation.notEvaluated
        if policy.verifies {
            if !anchors.isEmpty {
                SecTrustSetAnchorCertificates(trust, anchors as CFArray)
                SecTrustSetAnchorCertificatesOnly(trust, !policy.trustsSystemAnchors)
            }
            var error: CFError?
            if SecTrustEvaluateWithError(trust, &error) {
                evaluation = .trusted
            } else {
                evaluation = .untrusted(error.map { CFErrorCopyDescription($0) as String } ?? "the chain is not trusted")
            }
        }
        let chain = (SecTrustCopyCertificateChain(trust) as? [SecCertificate] ?? []).map { Array(SecCertificateCopyData($0) as Data) }
        return policy.decide(host: host, evaluation: evaluation, chain: chain)
    }
}
#endif
