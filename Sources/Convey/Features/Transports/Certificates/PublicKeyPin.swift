import Foundation

/// The SHA-256 digest of a SubjectPublicKeyInfo, read from the text `pinnedPublicKeys` holds:
/// `sha256//` followed by the digest in base64, as curl's `--pinnedpubkey` and HPKP write it.
@_spi(Tools) public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32 bytes of the digest.
    public let sha256: Data

    /// A pin from its 32-byte digest; `nil` for any other length.
    public init?(sha256: Data) {
        guard sha256.count == 32 else { return nil }
        self.sha256 = sha256
    }

    /// A pin from a digest SHA-256 made: 32 bytes.
    init(digest: [UInt8]) {
        sha256 = Data(digest)
    }

    /// A pin from its text, `sha256//<base64>`; `nil` when the text is not one.
    public init?(_ text: String) {
        let prefix = "sha256//"
        guard text.hasPrefix(prefix), let digest = Data(base64Encoded: String(text.dropFirst(prefix.count))) else { return nil }
        self.init(sha256: digest)
    }

    /// The pin of the key in a certificate or public-key file, PEM or DER: for a certificate
    /// file, its first certificate's key (see `CertificateFile`).
    public init(ofFile url: URL) throws(CertificateError) {
        self = try CertificateFile.read(url).publicKey.pin
    }

    /// `sha256//<base64>`.
    public var description: String { "sha256//" + sha256.base64EncodedString() }
}

/// A set of pins checked against a server's certificate chain: which certificate, if any,
/// carries a pinned key.
struct PinnedKeys: Sendable, Hashable {
    let pins: Set<PublicKeyPin>

    init(_ pins: some Sequence<PublicKeyPin>) {
        self.pins = Set(pins)
    }

    /// Where a pin matched in a chain.
    struct Match: Sendable, Hashable {
        /// The certificate's position: 0 is the server's own (the leaf), the last is the root.
        let position: Int
        /// The matched certificate's subject, for messages.
        let summary: String
        /// The pin that matched.
        let pin: PublicKeyPin
    }

    /// The first certificate of `chain` (DER, the server's own first) whose key is pinned, or
    /// `nil` when none is. Throws a `CertificateError` naming the certificate for one that cannot
    /// be read: a chain with a malformed certificate is never trusted by its other members.
    func match(chain: [[UInt8]]) throws(CertificateError) -> Match? {
        var certificates: [X509Certificate] = []
        for (position, der) in chain.enumerated() {
            do {
                certificates.append(try X509Certificate(der: der))
            } catch {
                throw error.within("certificate \(position + 1) of \(chain.count) in the chain")
            }
        }
        for (position, certificate) in certificates.enumerated() {
            let pin = certificate.publicKey.pin
            if pins.contains(pin) { return Match(position: position, summary: certificate.summary, pin: pin) }
        }
        return nil
    }
}
