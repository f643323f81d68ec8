/// An ASN.1 object identifier, kept as its DER content bytes: what certificates and keys name
/// their algorithms and curves with.
struct ASN1ObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The content bytes (without tag and length).
    let bytes: [UInt8]

    init(bytes: some Sequence<UInt8>) {
        self.bytes = Array(bytes)
    }

    /// `rsaEncryption`, 1.2.840.113549.1.1.1.
    static let rsaEncryption = ASN1ObjectID(bytes: [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01])
    /// `id-ecPublicKey`, 1.2.840.10045.2.1.
    static let ecPublicKey = ASN1ObjectID(bytes: [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01])
    /// `prime256v1` (P-256), 1.2.840.10045.3.1.7.
    static let p256 = ASN1ObjectID(bytes: [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07])
    /// `secp384r1` (P-384), 1.3.132.0.34.
    static let p384 = ASN1ObjectID(bytes: [0x2B, 0x81, 0x04, 0x00, 0x22])
    /// `id-Ed25519`, 1.3.101.112.
    static let ed25519 = ASN1ObjectID(bytes: [0x2B, 0x65, 0x70])
    /// `commonName`, 2.5.4.3.
    static let commonName = ASN1ObjectID(bytes: [0x55, 0x04, 0x03])

    /// The dotted form, `1.2.840.113549.1.1.1`; `?` for an encoding that is not one.
    var description: String {
        guard bytes.last.map({ $0 & 0x80 == 0 }) == true else { return "?" }
        var arcs: [UInt64] = []
        var value: UInt64 = 0
        for byte in bytes {
            guard value >> 57 == 0 else { return "?" }
            value = value << 7 | UInt64(byte & 0x7F)
            guard byte & 0x80 == 0 else { continue }
            if arcs.isEmpty {
                // The first subidentifier holds the first two arcs: 40 × first + second.
                let top = min(value / 40, 2)
                arcs += [top, value - top * 40]
            } else {
                arcs.append(value)
            }
            value = 0
        }
        return arcs.map(String.init).joined(separator: ".")
    }
}
