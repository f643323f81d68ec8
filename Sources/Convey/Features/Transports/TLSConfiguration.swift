import Foundation

/// How a transport secures its connections: which certificate authorities it trusts, which
/// public keys it pins, the lowest TLS version it accepts and the client certificate it presents.
/// See Docs/tls-and-proxies.md.
///
/// Set it on a server (`ServerConfiguration.tls`) or on a transport (`CurlTransport.Configuration.tls`).
/// `CurlTransport` does all of it, and so does `URLSessionTransport` on Apple platforms, except
/// a PEM client certificate. On Linux, FoundationNetworking offers no hook for trust, pins or
/// client certificates, so a `URLSessionTransport` there does only the default. A transport given
/// what it cannot do fails every request with `secureConnectionFailed`, naming it, rather than
/// connect with less protection than asked for.
public struct TLSConfiguration: Sendable, Hashable {
    /// A file of certificate authorities a server's certificate may chain to (PEM; on Apple
    /// platforms, PEM or DER): trusted besides
    /// the system's store, or instead of it when `trustsSystemCertificateAuthorities` is `false`
    /// (for servers with a private CA that should, or should not, still reach public ones). The
    /// file is read once, when the transport is made. Default: `nil`.
    public var certificateAuthoritiesFile: URL?
    /// Whether the system's store of certificate authorities (Debian: /etc/ssl/certs) is trusted.
    /// `false` trusts only `certificateAuthoritiesFile`; without one, nothing is trusted and
    /// every request fails. Default: `true`.
    public var trustsSystemCertificateAuthorities: Bool
    /// Public keys the server's certificate must have one of (on URLSession, any certificate of
    /// its chain), checked on every new connection after the chain is trusted; several allow a
    /// key to be rotated. Each is the SHA-256 digest
    /// of the server's SubjectPublicKeyInfo, as curl's `--pinnedpubkey` and HPKP write it:
    /// `sha256//` followed by the digest in base64. Get it from a certificate with
    /// `openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`,
    /// or `convey-harness tls pin cert.pem`.
    /// A text that is not such a pin makes every request fail, naming it. Default: empty, no pinning.
    public var pinnedPublicKeys: [String]
    /// Whether TLS 1.3 is required; otherwise TLS 1.2 or later is accepted. Default: `false`.
    public var requiresTLS13: Bool
    /// The certificate presented to servers that ask for one. Default: `nil`, none.
    public var clientCertificate: ClientCertificate?
    /// Accepts any certificate for any host: expired, self-signed, or issued to another name.
    /// Anyone on the path can then read and change the traffic. For a local test server only,
    /// never in a shipped app. Pins, if any, are still checked. Default: `false`.
    public var disablesCertificateVerificationInsecurely: Bool

    /// Creates a configuration; every parameter has the documented default.
    public init(certificateAuthoritiesFile: URL? = nil, trustsSystemCertificateAuthorities: Bool = true,
                pinnedPublicKeys: [String] = [], requiresTLS13: Bool = false,
                clientCertificate: ClientCertificate? = nil, disablesCertificateVerificationInsecurely: Bool = false) {
        self.certificateAuthoritiesFile = certificateAuthoritiesFile
        self.trustsSystemCertificateAuthorities = trustsSystemCertificateAuthorities
        self.pinnedPublicKeys = pinnedPublicKeys
        self.requiresTLS13 = requiresTLS13
        self.clientCertificate = clientCertificate
        self.disablesCertificateVerificationInsecurely = disablesCertificateVerificationInsecurely
    }

    /// Whether this is the default: the system's store, no pins, TLS 1.2 or later, no client certificate.
    public var isDefault: Bool { self == TLSConfiguration() }

    /// Which certificate authorities a server's certificate may chain to.
    enum TrustRoots: Sendable, Hashable {
        /// The system's store.
        case system
        /// The system's store and the certificate authorities in a PEM file.
        case systemAnd(certificatesFile: URL)
        /// Only the certificate authorities in a PEM file.
        case only(certificatesFile: URL)
        /// None: the system's store is not trusted and no file was given.
        case nothing
    }

    /// The certificate authorities trusted, from `certificateAuthoritiesFile` and
    /// `trustsSystemCertificateAuthorities`.
    var trustRoots: TrustRoots {
        switch (certificateAuthoritiesFile, trustsSystemCertificateAuthorities) {
        case (nil, true): .system
        case (let file?, true): .systemAnd(certificatesFile: file)
        case (let file?, false): .only(certificatesFile: file)
        case (nil, false): .nothing
        }
    }

    /// A configuration trusting `trustRoots`, the rest default.
    init(trustRoots: TrustRoots) {
        switch trustRoots {
        case .system: self.init()
        case .systemAnd(let file): self.init(certificateAuthoritiesFile: file)
        case .only(let file): self.init(certificateAuthoritiesFile: file, trustsSystemCertificateAuthorities: false)
        case .nothing: self.init(trustsSystemCertificateAuthorities: false)
        }
    }

    /// The pins, parsed; a text that is not one is left out (`unusableReason` names it).
    var pins: [PublicKeyPin] { pinnedPublicKeys.compactMap(PublicKeyPin.init) }

    /// Why no connection can be made with this configuration, whatever the transport, or `nil`.
    var unusableReason: String? {
        if case .nothing = trustRoots {
            return "no certificate authority is trusted: trustsSystemCertificateAuthorities is false and there is no certificateAuthoritiesFile"
        }
        if let invalid = pinnedPublicKeys.first(where: { PublicKeyPin($0) == nil }) {
            return "the pinned public key \(invalid.debugDescription) is not sha256// followed by a base64 SHA-256 digest"
        }
        return nil
    }

    /// What a transport that can only do the default (URLSession on Linux) cannot honour, empty
    /// for the default: named so that the failure says what to change.
    var featuresBeyondDefault: [String] {
        var features: [String] = []
        if trustRoots != .system { features.append("custom trust roots") }
        if !pinnedPublicKeys.isEmpty { features.append("public-key pinning") }
        if requiresTLS13 { features.append("a minimum TLS version") }
        if clientCertificate != nil { features.append("a client certificate") }
        if disablesCertificateVerificationInsecurely { features.append("turning certificate verification off") }
        return features
    }
}

/// A certificate and private key a transport presents to servers that ask for one: a PEM
/// certificate and key (`init(certificateFile:keyFile:passphrase:)`) or a PKCS#12 bundle
/// (`init(pkcs12File:passphrase:)`).
///
/// The passphrase never appears in any text Convey produces: `description` and the mirror
/// (`dump`, debuggers) leave it out.
public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// How the certificate is stored: set by the initializer used.
    enum Format: String, Sendable, Hashable {
        /// PEM text: the certificate in one file, its key in the same file or in `keyFile`.
        case pem
        /// A PKCS#12 (`.p12`, `.pfx`) bundle holding both, usually protected by the passphrase.
        case pkcs12
    }

    /// The certificate (PEM) or the bundle (PKCS#12).
    public var certificateFile: URL
    /// The private key's PEM file when it is not in `certificateFile`; unused for PKCS#12.
    public var keyFile: URL?
    /// The passphrase of an encrypted key or bundle; `nil` for an unencrypted one.
    public var passphrase: String?
    /// How `certificateFile` is stored.
    let format: Format

    /// A PEM certificate and key.
    public init(certificateFile: URL, keyFile: URL? = nil, passphrase: String? = nil) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.passphrase = passphrase
        format = .pem
    }

    /// A PKCS#12 bundle holding the certificate and its key.
    public init(pkcs12File: URL, passphrase: String? = nil) {
        certificateFile = pkcs12File
        keyFile = nil
        self.passphrase = passphrase
        format = .pkcs12
    }

    /// The files and format; the passphrase only as "with a passphrase".
    public var description: String {
        var text = "\(format.rawValue) certificate \(certificateFile.path)"
        if let keyFile { text += ", key \(keyFile.path)" }
        if passphrase != nil { text += ", with a passphrase" }
        return text
    }

    /// Everything but the passphrase, so that `dump` and debuggers never show it.
    public var customMirror: Mirror {
        Mirror(self, children: ["certificateFile": certificateFile, "keyFile": keyFile as Any, "format": format,
                                "hasPassphrase": passphrase != nil])
    }
}
