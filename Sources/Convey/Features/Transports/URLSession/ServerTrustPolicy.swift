import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How `URLSessionTransport` answers a server-trust challenge on Apple platforms: which
/// certificate authorities anchor the chain, which public keys must be in it, whether the chain
/// is verified at all. The decision is made here, platform-neutrally; the Security framework's
/// part (evaluating the trust with the anchors, copying the chain) is in
/// `ServerTrustPolicy+Security.swift`.
///
/// - Anchors: the certificates of `certificateAuthoritiesFile` (PEM or DER), read once, when the
///   transport is made; besides the system's, or instead of them when
///   `trustsSystemCertificateAuthorities` is `false`.
/// - Pins: the chain the system built (the server's certificate, its intermediates and the
///   anchor) must hold a certificate whose key is pinned. curl checks only the server's own
///   certificate, so a pin of an intermediate or a root works on URLSession alone.
/// - Verification off: the chain is not evaluated; pins are still checked against the
///   certificates the server presented.
struct ServerTrustPolicy: Sendable {
    /// The DER certificates trusted as anchors; empty for the system's alone.
    let anchors: [[UInt8]]
    /// Whether the system's anchors are trusted too.
    let trustsSystemAnchors: Bool
    /// The pins the chain must hold one of; empty for none.
    let pins: PinnedKeys
    /// Whether the chain is evaluated (not `disablesCertificateVerificationInsecurely`).
    let verifies: Bool

    /// The policy for `tls`, its anchors read from `certificateAuthoritiesFile`. Throws when the
    /// file cannot be read or holds a certificate that cannot be.
    init(tls: TLSConfiguration) throws(CertificateError) {
        switch tls.trustRoots {
        case .system, .nothing:
            anchors = []
        case .systemAnd(let file), .only(let file):
            anchors = try CertificateFile.read(file).certificates.map(\.der)
            guard !anchors.isEmpty else { throw CertificateError("it holds no certificate", in: file.path(percentEncoded: false)) }
        }
        trustsSystemAnchors = tls.trustsSystemCertificateAuthorities
        pins = PinnedKeys(tls.pins)
        verifies = !tls.disablesCertificateVerificationInsecurely
    }

    /// Whether the challenge needs Convey's answer; otherwise the system's default handling is
    /// exactly what was asked for.
    var isCustom: Bool { !anchors.isEmpty || !pins.pins.isEmpty || !verifies }

    /// What the system's evaluation of the chain said.
    enum Evaluation: Sendable, Hashable {
        /// The chain is trusted for the host.
        case trusted
        /// It is not, and why (the Security framework's words).
        case untrusted(String)
        /// It was not evaluated: verification is off.
        case notEvaluated
    }

    /// Whether to go on with the connection.
    enum Decision: Sendable, Hashable {
        /// Go on; `pinnedAt` is the certificate whose key matched, when there are pins.
        case accept(pinnedAt: PinnedKeys.Match?)
        /// End the handshake: the failure every request on it gets.
        case reject(code: URLError.Code, reason: String)
    }

    /// The decision for a connection to `host`, given the system's evaluation and the chain
    /// (DER, the server's own certificate first).
    func decide(host: String, evaluation: Evaluation, chain: [[UInt8]]) -> Decision {
        if verifies, case .untrusted(let reason) = evaluation {
            return .reject(code: .serverCertificateUntrusted, reason: "Certificate verification failed for \(host): \(reason)")
        }
        guard !pins.pins.isEmpty else { return .accept(pinnedAt: nil) }
        do throws(CertificateError) {
            if let match = try pins.match(chain: chain) { return .accept(pinnedAt: match) }
            let keys = pins.pins.count == 1 ? "the pinned key is not" : "none of the \(pins.pins.count) pinned keys is"
            return .reject(code: .secureConnectionFailed,
                           reason: "Public-key pinning failed for \(host): \(keys) the key of a certificate in its chain of \(chain.count)")
        } catch {
            return .reject(code: .secureConnectionFailed, reason: "Public-key pinning failed for \(host): \(error)")
        }
    }
}
