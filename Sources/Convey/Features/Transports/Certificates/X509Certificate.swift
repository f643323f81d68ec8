/// An X.509 certificate (RFC 5280), read as far as pinning and messages need: the
/// SubjectPublicKeyInfo and the subject's common name. The whole structure around them is checked
/// (the certificate, its `tbsCertificate` up to the key, the signature fields after it), so bytes
/// that are not a certificate are a `CertificateError`, never a key read from the wrong place.
struct X509Certificate: Sendable, Hashable {
    /// The DER encoding.
    let der: [UInt8]
    /// The certificate's public key.
    let publicKey: SubjectPublicKeyInfo
    /// The subject's common name (`CN`), when it has one as a string.
    let commonName: String?

    /// Reads a certificate from its DER encoding, which must be all of `der`.
    init(der: [UInt8]) throws(CertificateError) {
        var outer = DERReader(der)
        let certificate = try outer.next(DERReader.Tag.sequence, "the Certificate")
        try outer.expectEnd(of: "the Certificate")
        var fields = certificate.reader
        var tbs = try fields.next(DERReader.Tag.sequence, "the tbsCertificate").reader
        _ = try fields.next(DERReader.Tag.sequence, "the signatureAlgorithm")
        _ = try fields.next(DERReader.Tag.bitString, "the signatureValue")
        try fields.expectEnd(of: "the Certificate")

        if let version = try tbs.nextIfPresent(DERReader.Tag.context(0), "the version") {
            var inner = version.reader
            _ = try inner.next(DERReader.Tag.integer, "the version")
            try inner.expectEnd(of: "the version")
        }
        _ = try tbs.next(DERReader.Tag.integer, "the serialNumber")
        _ = try tbs.next(DERReader.Tag.sequence, "the signature algorithm")
        _ = try tbs.next(DERReader.Tag.sequence, "the issuer")
        _ = try tbs.next(DERReader.Tag.sequence, "the validity")
        let subject = try tbs.next(DERReader.Tag.sequence, "the subject")
        publicKey = try SubjectPublicKeyInfo(element: try tbs.next(DERReader.Tag.sequence, "the subjectPublicKeyInfo"))
        commonName = Self.commonName(in: subject)
        self.der = der
    }

    /// The first common name in a Name, if it is a UTF8String, PrintableString or IA5String.
    private static func commonName(in name: DERReader.Element) -> String? {
        var relativeNames = name.reader
        while !relativeNames.isAtEnd {
            guard let set = try? relativeNames.next(DERReader.Tag.set, "a relative name") else { return nil }
            var attributes = set.reader
            while !attributes.isAtEnd {
                guard var attribute = try? attributes.next(DERReader.Tag.sequence, "an attribute").reader,
                      let type = try? attribute.next(DERReader.Tag.objectIdentifier, "an attribute type"),
                      let value = try? attribute.next("an attribute value")
                else { return nil }
                guard ASN1ObjectID(bytes: type.contents) == .commonName else { continue }
                switch value.tag {
                case DERReader.Tag.utf8String, DERReader.Tag.printableString, DERReader.Tag.ia5String:
                    return String(decoding: value.contents, as: UTF8.self)
                default:
                    return nil
                }
            }
        }
        return nil
    }

    /// `CN=name`, or "a certificate without a common name", for messages.
    var summary: String {
        commonName.map { "CN=\($0)" } ?? "a certificate without a common name"
    }
}
