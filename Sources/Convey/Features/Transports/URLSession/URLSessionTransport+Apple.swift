#if canImport(Darwin)
import Foundation
import Security

extension URLSessionTransport {
    /// The answers to a transport's challenges (Apple platforms only), or the failure of every
    /// request when a file they need cannot be used: the trust anchors of
    /// `certificateAuthoritiesFile` (read once), the identity of a PKCS#12 client certificate, the
    /// proxy's credentials.
    static func challengeAnswers(tls: TLSConfiguration, proxy: ProxyConfiguration) -> Result<ChallengeAnswers, URLError> {
        var answers = ChallengeAnswers()
        do throws(CertificateError) {
            let policy = try ServerTrustPolicy(tls: tls)
            if policy.isCustom {
                guard let evaluator = SecurityTrustEvaluator(policy: policy) else {
                    return .failure(loadingFailure("Loading the trusted certificates", "the Security framework refused a certificate of \(tls.certificateAuthoritiesFile?.path ?? "the file")"))
                }
                answers.serverTrust = evaluator
            }
        } catch {
            return .failure(loadingFailure("Loading the trusted certificates", error.description))
        }
        if let certificate = tls.clientCertificate {
            switch clientCredential(certificate) {
            case .success(let credential): answers.clientCertificate = credential
            case .failure(let failure): return .failure(failure)
            }
        }
        if case .through(let through) = proxy.route, through.kind == .http, let username = through.username {
            answers.proxy = URLCredential(user: username, password: through.password ?? "", persistence: .forSession)
        }
        return .success(answers)
    }

    /// The credential that answers a server's client-certificate challenge: the identity in
    /// `certificate`'s PKCS#12 file, read once, when the transport is made, with the bundle's
    /// other certificates (its intermediates) sent after it. A file that cannot be read or opened
    /// with its passphrase fails every request with `secureConnectionFailed`.
    ///
    /// Imported into this process's memory only: `kSecImportToMemoryOnly` where the system has it
    /// (macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2); iOS, tvOS, watchOS and visionOS never
    /// import into a keychain anyway. macOS 13 and 14 have no such option and import into the
    /// user's default keychain (Docs/tls-and-proxies.md).
    static func clientCredential(_ certificate: ClientCertificate) -> Result<URLCredential, URLError> {
        let path = certificate.certificateFile.path
        func failure(_ reason: String) -> URLError {
            loadingFailure("Loading the client certificate", "\(path): \(reason)")
        }
        guard let bundle = try? Data(contentsOf: certificate.certificateFile) else { return .failure(failure("the file cannot be read")) }
        var items: CFArray?
        var options: [String: Any] = [kSecImportExportPassphrase as String: certificate.passphrase ?? ""]
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            options[kSecImportToMemoryOnly as String] = true
        }
        let status = SecPKCS12Import(bundle as CFData, options as CFDictionary, &items)
        guard status == errSecSuccess else {
            return .failure(failure("the bundle or its passphrase was refused (OSStatus \(status))\(keychainImportNote)"))
        }
        guard let imported = (items as? [[String: Any]])?.first, let found = imported[kSecImportItemIdentity as String],
              CFGetTypeID(found as CFTypeRef) == SecIdentityGetTypeID()
        else { return .failure(failure("the bundle holds no identity")) }
        let identity = unsafeDowncast(found as AnyObject, to: SecIdentity.self)
        var leaf: SecCertificate?
        _ = SecIdentityCopyCertificate(identity, &leaf)
        let chain = imported[kSecImportItemCertChain as String] as? [SecCertificate] ?? []
        let intermediates = ChallengeAnswers.chainLessLeaf(chain, leaf: leaf.map { SecCertificateCopyData($0) as Data }) {
            SecCertificateCopyData($0) as Data
        }
        return .success(URLCredential(identity: identity, certificates: intermediates.isEmpty ? nil : intermediates, persistence: .forSession))
    }

    /// What a failed import adds where it went through the user's keychain: macOS before 15.
    private static var keychainImportNote: String {
        #if os(macOS)
        if #unavailable(macOS 15) {
            return "; before macOS 15 the Security framework imports it into the default keychain, which must be unlocked and writable"
        }
        #endif
        return ""
    }

    /// `check failed: reason; nothing was sent`, as `secureConnectionFailed`.
    private static func loadingFailure(_ check: String, _ reason: String) -> URLError {
        URLError(.secureConnectionFailed, userInfo: [NSLocalizedDescriptionKey: "\(check) failed: \(reason); nothing was sent"])
    }
}
#endif
