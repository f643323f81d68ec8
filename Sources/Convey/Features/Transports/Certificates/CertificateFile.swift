import Foundation

/// A file of certificates or keys, PEM or DER, as `tls pin`, the trust anchors and client
/// certificates read it.
///
/// PEM files may hold several blocks: `CERTIFICATE` (and OpenSSL's `TRUSTED CERTIFICATE`),
/// `PUBLIC KEY` (a SubjectPublicKeyInfo) and `RSA PUBLIC KEY` (PKCS #1), and private keys, which
/// are recognized and never read here. A DER file holds one certificate or one
/// SubjectPublicKeyInfo. Files are read whole, at most `maximumSize` bytes.
struct CertificateFile: Sendable {
    /// The largest file read: a bundle of a few hundred certificates.
    static let maximumSize = 4 << 20

    /// The certificates, in file order.
    let certificates: [X509Certificate]
    /// The public keys given as keys (not in certificates), in file order.
    let publicKeys: [SubjectPublicKeyInfo]
    /// Where the file came from, for messages.
    let source: String

    /// The key a pin of this file digests: its first certificate's, else its first public key.
    var publicKey: SubjectPublicKeyInfo {
        // `init` refuses a file with neither.
        certificates.first?.publicKey ?? publicKeys[0]
    }

    /// Reads the file at `url`.
    static func read(_ url: URL) throws(CertificateError) -> CertificateFile {
        let path = url.path(percentEncoded: false)
        let read: [UInt8]?
        do throws(FileFailure) {
            read = try OwnerOnlyFiles.read(atPath: path, limit: maximumSize)
        } catch {
            throw CertificateError(error.reason, in: path)
        }
        guard let bytes = read else { throw CertificateError("there is no such file", in: path) }
        return try CertificateFile(bytes, source: path)
    }

    /// Reads certificates or keys from a file's bytes; `source` names it in errors.
    init(_ bytes: [UInt8], source: String) throws(CertificateError) {
        self.source = source
        var certificates: [X509Certificate] = []
        var publicKeys: [SubjectPublicKeyInfo] = []
        if PEMDocument.looksLikePEM(bytes) {
            let document: PEMDocument
            do { document = try PEMDocument(bytes) } catch { throw error.within("\(source), \(error.source)") }
            for block in document.blocks {
                let place = "\(source), the \(block.label) block at line \(block.line)"
                do {
                    switch block.label {
                    case "CERTIFICATE":
                        certificates.append(try X509Certificate(der: block.der))
                    case "TRUSTED CERTIFICATE":
                        // OpenSSL appends its trust settings after the certificate itself.
                        var reader = DERReader(block.der)
                        certificates.append(try X509Certificate(der: Array(try reader.next(DERReader.Tag.sequence, "the Certificate").encoded)))
                    case "PUBLIC KEY":
                        publicKeys.append(try SubjectPublicKeyInfo(der: block.der[...]))
                    case "RSA PUBLIC KEY":
                        publicKeys.append(try SubjectPublicKeyInfo(pkcs1RSAPublicKey: block.der[...]))
                    default:
                        // Private keys, parameters, requests: not what this file is read for.
                        continue
                    }
                } catch {
                    throw error.within(place)
                }
            }
        } else {
            do {
                certificates.append(try X509Certificate(der: bytes))
            } catch let certificateError {
                // Not a certificate: a bare SubjectPublicKeyInfo, or neither (then the certificate's error says why).
                guard let key = try? SubjectPublicKeyInfo(der: bytes[...]) else {
                    throw CertificateError("it is neither PEM nor a DER certificate or public key: " + certificateError.reason,
                                           at: certificateError.offset, in: source)
                }
                publicKeys.append(key)
            }
        }
        guard !certificates.isEmpty || !publicKeys.isEmpty else {
            throw CertificateError("it holds no certificate and no public key", in: source)
        }
        self.certificates = certificates
        self.publicKeys = publicKeys
    }
}
