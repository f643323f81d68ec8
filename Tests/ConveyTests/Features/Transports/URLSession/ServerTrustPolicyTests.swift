import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// How URLSessionTransport answers a server-trust challenge on Apple platforms, decided here
/// from the system's evaluation and the chain.
@Suite("Server trust decisions", .openssl)
struct ServerTrustPolicyTests {
    private func policy(_ change: (inout TLSConfiguration) -> Void) throws -> ServerTrustPolicy {
        var tls = TLSConfiguration()
        change(&tls)
        return try ServerTrustPolicy(tls: tls)
    }

    @Test func theAnchorsAreTheCertificatesOfTheFileReadOnce() throws {
        let material = try CertificateMaterial.get()
        let bundle = material.file("anchors.pem")
        try (try Data(contentsOf: material.file("root.pem")) + (try Data(contentsOf: material.file("intermediate.pem")))).write(to: bundle)
        let only = try policy { $0 = TLSConfiguration(certificateAuthoritiesFile: bundle, trustsSystemCertificateAuthorities: false) }
        #expect(only.anchors == [try material.bytes("root.der"), try material.bytes("intermediate.der")])
        #expect(!only.trustsSystemAnchors)
        #expect(only.isCustom)
        let der = try policy { $0 = TLSConfiguration(certificateAuthoritiesFile: material.file("root.der")) }
        #expect(der.anchors == [try material.bytes("root.der")])
        #expect(der.trustsSystemAnchors)
        #expect(!(try policy { _ in }).isCustom)
    }

    @Test func anUnreadableOrEmptyAnchorsFileIsAnError() throws {
        let material = try CertificateMaterial.get()
        #expect(throws: CertificateError.self) { try policy { $0.certificateAuthoritiesFile = material.file("missing.pem") } }
        let keyOnly = #expect(throws: CertificateError.self) { try policy { $0.certificateAuthoritiesFile = material.file("p256.pub.pem") } }
        #expect(keyOnly?.reason == "it holds no certificate")
    }

    @Test func anUntrustedChainIsRejectedNamingTheHostWhenVerifying() throws {
        let decision = try policy { _ in }.decide(host: "api.example", evaluation: .untrusted("the certificate has expired"), chain: [])
        #expect(decision == .reject(code: .serverCertificateUntrusted, reason: "Certificate verification failed for api.example: the certificate has expired"))
    }

    @Test func pinsAnywhereInTheChainAcceptAndNoneRejects() throws {
        let material = try CertificateMaterial.get()
        let chain = try material.chain()
        for (pin, position) in [(material.chainPins.leaf, 0), (material.chainPins.intermediate, 1), (material.chainPins.root, 2)] {
            let decision = try policy { $0.pinnedPublicKeys = [pin] }.decide(host: "h", evaluation: .trusted, chain: chain)
            guard case .accept(let match) = decision else {
                Issue.record("rejected: \(decision)")
                continue
            }
            #expect(match?.position == position)
        }
        let other = try #require(material.pins[.p384])
        let rejected = try policy { $0.pinnedPublicKeys = [other] }.decide(host: "h", evaluation: .trusted, chain: chain)
        #expect(rejected == .reject(code: .secureConnectionFailed,
                                    reason: "Public-key pinning failed for h: the pinned key is not the key of a certificate in its chain of 3"))
    }

    @Test func verificationOffSkipsTheEvaluationButStillChecksPins() throws {
        let material = try CertificateMaterial.get()
        let chain = try material.chain()
        let off = try policy { $0.disablesCertificateVerificationInsecurely = true }
        #expect(off.isCustom)
        #expect(off.decide(host: "h", evaluation: .notEvaluated, chain: chain) == .accept(pinnedAt: nil))
        let pinned = try policy {
            $0.disablesCertificateVerificationInsecurely = true
            $0.pinnedPublicKeys = [material.pins[.rsa] ?? "", material.pins[.p256] ?? ""]
        }
        guard case .reject(let code, let reason) = pinned.decide(host: "h", evaluation: .notEvaluated, chain: [chain[0]]) else {
            Issue.record("a chain without a pinned key was accepted")
            return
        }
        #expect(code == .secureConnectionFailed)
        #expect(reason == "Public-key pinning failed for h: none of the 2 pinned keys is the key of a certificate in its chain of 1")
    }

    @Test func aMalformedCertificateInTheChainIsARejectionNeverACrash() throws {
        let material = try CertificateMaterial.get()
        let chain = try material.chain()
        let decision = try policy { $0.pinnedPublicKeys = [material.chainPins.root] }
            .decide(host: "h", evaluation: .trusted, chain: [chain[0], Array(chain[1].prefix(40)), chain[2]])
        guard case .reject(let code, let reason) = decision else {
            Issue.record("accepted a chain with a malformed certificate")
            return
        }
        #expect(code == .secureConnectionFailed)
        #expect(reason.hasPrefix("Public-key pinning failed for h: certificate 2 of 3 in the chain: "))
    }
}
