import Foundation

/// How a transport secures its connections: which certificate authorities it trusts, which
/// public keys it pins, the lowest TLS version it accepts and the client certificate it presents.
/// See Docs/tls-and-proxies.md.
///
/// Set it on a server (`ServerConfiguration.tls`) or on a transport (`CurlTransport.Configuration.tls`).
/// `CurlTransport` does all of it. `URLSessionTransport` does only the default: on Linux,
/// FoundationNetworking offers no hook for trust, pins or client certificates, so a
/// `URLSessionTransport` given anything else fails every request with `secureConnectionFailed`
/// rather than connect with less protection than asked for.
public struct TLSConfiguration: Sendable, Hashable {
    /// Which certificate authorities a server's certificate may chain to.
    public enum TrustRoots: Sendable, Hashable {
        /// The system's store (Debian: /etc/ssl/certs).
        case system
        /// The system's store and the certificate authorities in a PEM file, for servers with a
        /// private CA that should still reach public ones.
        case systemAnd(certificatesFile: URL)
        /// Only the certificate authorities in a PEM file: the system's store is not consulted.
        case only(certificatesFile: URL)
    }

    /// The TLS versions a transport can be told to require at least.
    public enum Version: String, Sendable, Hashable, Comparable, CaseIterable {
        /// TLS 1.2 (RFC 5246).
        case v1_2 = "TLSv1.2"
        /// TLS 1.3 (RFC 8446).
        case v1_3 = "TLSv1.3"

        /// Orders versions from oldest to newest.
        public static func < (lhs: Self, rhs: Self) -> Bool {
            allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
        }
    }

    /// The certificate authorities trusted. Default: `.system`.
    public var trustRoots: TrustRoots
    /// Public keys the server's certificate must have one of, checked on every new connection
    /// after the chain is trusted; several allow a key to be rotated. Default: empty, no pinning.
    public var pinnedPublicKeys: [PublicKeyPin]
    /// The lowest TLS version accepted. Default: TLS 1.2.
    public var minimumVersion: Version
    /// The certificate presented to servers that ask for one. Default: `nil`, none.
    public var clientCertificate: ClientCertificate?
    /// Accepts any certificate for any host: expired, self-signed, or issued to another name.
    /// Anyone on the path can then read and change the traffic. For a local test server only,
    /// never in a shipped app. Pins, if any, are still checked. Default: `false`.
    public var disablesCertificateVerificationInsecurely: Bool

    /// Creates a configuration; every parameter has the documented default.
    public init(trustRoots: TrustRoots = .system, pinnedPublicKeys: [PublicKeyPin] = [], minimumVersion: Version = .v1_2,
                clientCertificate: ClientCertificate? = nil, disablesCertificateVerificationInsecurely: Bool = false) {
        self.trustRoots = trustRoots
        self.pinnedPublicKeys = pinnedPublicKeys
        self.minimumVersion = minimumVersion
        self.clientCertificate = clientCertificate
        self.disablesCertificateVerificationInsecurely = disablesCertificateVerificationInsecurely
    }

    /// Whether this is the default: the system's store, no pins, TLS 1.2 or later, no client certificate.
    public var isDefault: Bool { self == TLSConfiguration() }

    /// What a transport that can only do the default (URLSession on Linux) cannot honour, empty
    /// for the default: named so that the failure says what to change.
    var featuresBeyondDefault: [String] {
        var features: [String] = []
        if trustRoots != .system { features.append("custom trust roots") }
        if !pinnedPublicKeys.isEmpty { features.append("public-key pinning") }
        if minimumVersion != .v1_2 { features.append("a minimum TLS version") }
        if clientCertificate != nil { features.append("a client certificate") }
        if disablesCertificateVerificationInsecurely { features.append("turning certificate verification off") }
        return features
    }
}

/// The SHA-256 digest of a server's SubjectPublicKeyInfo, as curl's `--pinnedpubkey` and HPKP
/// write it: `sha256//` followed by the digest in base64.
///
/// Get it from a certificate with
/// `openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32 bytes of the digest.
    public let sha256: Data

    /// A pin from its 32-byte digest; `nil` for any other length.
    public init?(sha256: Data) {
        guard sha256.count == 32 else { return nil }
        self.sha256 = sha256
    }

    /// A pin from its text, `sha256//<base64>`; `nil` when the text is not one.
    public init?(_ text: String) {
        let prefix = "sha256//"
        guard text.hasPrefix(prefix), let digest = Data(base64Encoded: String(text.dropFirst(prefix.count))) else { return nil }
        self.init(sha256: digest)
    }

    /// `sha256//<base64>`.
    public var description: String { "sha256//" + sha256.base64EncodedString() }
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
