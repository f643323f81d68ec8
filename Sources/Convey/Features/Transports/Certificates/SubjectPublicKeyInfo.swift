import Foundation

/// A public key as X.509 carries it (RFC 5280 §4.1.2.7): its algorithm, and the key. Its DER
/// encoding is what a `sha256//` pin digests, as curl, HPKP and
/// `openssl pkey -pubin -outform der | openssl dgst -sha256` do.
///
/// The keys Convey knows are checked to be whole: RSA (a modulus and an exponent), EC keys on
/// P-256 and P-384 (a point of the curve's size) and Ed25519 (32 bytes). Another algorithm is
/// read as `.other` with its object identifier: it can still be pinned.
struct SubjectPublicKeyInfo: Sendable, Hashable {
    /// The key's algorithm.
    enum Algorithm: Sendable, Hashable, CustomStringConvertible {
        /// RSA, with the modulus's size in bits.
        case rsa(bits: Int)
        /// ECDSA or ECDH on NIST P-256 (`prime256v1`).
        case ecP256
        /// ECDSA or ECDH on NIST P-384 (`secp384r1`).
        case ecP384
        /// Ed25519.
        case ed25519
        /// Any other algorithm (RSA-PSS, P-521, Ed448, DSA…), named by its object identifier.
        case other(String)

        var description: String {
            switch self {
            case .rsa(let bits): "RSA \(bits)"
            case .ecP256: "EC P-256"
            case .ecP384: "EC P-384"
            case .ed25519: "Ed25519"
            case .other(let oid): "algorithm \(oid)"
            }
        }
    }

    /// The DER encoding of the whole SubjectPublicKeyInfo.
    let der: [UInt8]
    /// The key's algorithm.
    let algorithm: Algorithm

    /// The SHA-256 pin of this key.
    var pin: PublicKeyPin {
        // 32 bytes by construction.
        PublicKeyPin(digest: SHA256.digest(der))
    }

    /// Reads a SubjectPublicKeyInfo from its DER encoding, which must be all of `der`.
    init(der: ArraySlice<UInt8>) throws(CertificateError) {
        var outer = DERReader(der)
        let sequence = try outer.next(DERReader.Tag.sequence, "the SubjectPublicKeyInfo")
        try outer.expectEnd(of: "the SubjectPublicKeyInfo")
        try self.init(element: sequence)
    }

    /// Reads a SubjectPublicKeyInfo from its element in a certificate.
    init(element: DERReader.Element) throws(CertificateError) {
        var fields = element.reader
        var algorithmFields = try fields.next(DERReader.Tag.sequence, "the key's AlgorithmIdentifier").reader
        let oid = ASN1ObjectID(bytes: try algorithmFields.next(DERReader.Tag.objectIdentifier, "the key's algorithm").contents)
        let parameters: DERReader.Element? = algorithmFields.isAtEnd ? nil : try algorithmFields.next("the key's algorithm parameters")
        try algorithmFields.expectEnd(of: "the key's AlgorithmIdentifier")
        let keyElement = try fields.next(DERReader.Tag.bitString, "the subjectPublicKey")
        try fields.expectEnd(of: "the SubjectPublicKeyInfo")
        let key = try keyElement.wholeBytesOfBitString("the subjectPublicKey")
        algorithm = try Self.algorithm(oid, parameters: parameters, key: key, at: keyElement.offset)
        der = Array(element.encoded)
    }

    /// Wraps a PKCS #1 `RSAPublicKey` (PEM's `RSA PUBLIC KEY`) as the SubjectPublicKeyInfo
    /// OpenSSL writes for it: `rsaEncryption` with NULL parameters.
    init(pkcs1RSAPublicKey: ArraySlice<UInt8>) throws(CertificateError) {
        var reader = DERReader(pkcs1RSAPublicKey)
        _ = try reader.next(DERReader.Tag.sequence, "the RSAPublicKey")
        try reader.expectEnd(of: "the RSAPublicKey")
        let algorithmIdentifier = DEREncoding.sequence(DEREncoding.element(DERReader.Tag.objectIdentifier, ASN1ObjectID.rsaEncryption.bytes)
                                                           + DEREncoding.element(DERReader.Tag.null, []))
        let key = DEREncoding.element(DERReader.Tag.bitString, [0] + Array(pkcs1RSAPublicKey))
        try self.init(der: DEREncoding.sequence(algorithmIdentifier + key)[...])
    }

    private static func algorithm(_ oid: ASN1ObjectID, parameters: DERReader.Element?, key: ArraySlice<UInt8>,
                                  at offset: Int) throws(CertificateError) -> Algorithm {
        switch oid {
        case .rsaEncryption:
            guard parameters == nil || parameters?.tag == DERReader.Tag.null && parameters?.contents.isEmpty == true else {
                throw CertificateError("an RSA key's parameters are not NULL", at: parameters?.offset ?? offset)
            }
            return .rsa(bits: try rsaModulusBits(key, at: offset))
        case .ecPublicKey:
            guard let parameters, parameters.tag == DERReader.Tag.objectIdentifier else {
                throw CertificateError("an EC key does not name its curve", at: offset)
            }
            let curve = ASN1ObjectID(bytes: parameters.contents)
            let (algorithm, coordinateSize): (Algorithm, Int) = switch curve {
            case .p256: (.ecP256, 32)
            case .p384: (.ecP384, 48)
            default: (.other("\(ASN1ObjectID.ecPublicKey) on curve \(curve)"), 0)
            }
            if coordinateSize > 0 { try checkPoint(key, coordinateSize: coordinateSize, curve: algorithm, at: offset) }
            return algorithm
        case .ed25519:
            guard parameters == nil else { throw CertificateError("an Ed25519 key has parameters, which RFC 8410 forbids", at: parameters?.offset ?? offset) }
            guard key.count == 32 else { throw CertificateError("an Ed25519 key has \(key.count) bytes, not 32", at: offset) }
            return .ed25519
        default:
            return .other(oid.description)
        }
    }

    /// The size in bits of the modulus of a PKCS #1 `RSAPublicKey`.
    private static func rsaModulusBits(_ key: ArraySlice<UInt8>, at offset: Int) throws(CertificateError) -> Int {
        var outer = DERReader(key)
        var fields = try outer.next(DERReader.Tag.sequence, "the RSAPublicKey").reader
        try outer.expectEnd(of: "the RSAPublicKey")
        let modulus = try fields.next(DERReader.Tag.integer, "the RSA modulus").unsignedInteger("the RSA modulus")
        let exponent = try fields.next(DERReader.Tag.integer, "the RSA exponent").unsignedInteger("the RSA exponent")
        try fields.expectEnd(of: "the RSAPublicKey")
        guard let top = modulus.first, top != 0 else { throw CertificateError("the RSA modulus is zero", at: offset) }
        guard exponent.contains(where: { $0 != 0 }) else { throw CertificateError("the RSA exponent is zero", at: offset) }
        return (modulus.count - 1) * 8 + (8 - top.leadingZeroBitCount)
    }

    /// Checks that an EC key is a point of the curve's size, uncompressed (`04 X Y`) or compressed (`02 X`, `03 X`).
    private static func checkPoint(_ key: ArraySlice<UInt8>, coordinateSize: Int, curve: Algorithm, at offset: Int) throws(CertificateError) {
        switch key.first {
        case 0x04 where key.count == 1 + 2 * coordinateSize: return
        case 0x02 where key.count == 1 + coordinateSize, 0x03 where key.count == 1 + coordinateSize: return
        default: throw CertificateError("the \(curve) key is not a point of the curve (\(key.count) bytes)", at: offset)
        }
    }
}

/// Writes the few DER structures Convey builds itself.
enum DEREncoding {
    /// Tag, length and `contents`.
    static func element(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        [tag] + length(contents.count) + contents
    }

    /// A SEQUENCE of `contents`.
    static func sequence(_ contents: [UInt8]) -> [UInt8] {
        element(DERReader.Tag.sequence, contents)
    }

    private static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(truncatingIfNeeded: rest), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
}
