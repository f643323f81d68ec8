import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Pins computed by Convey's own parser, against OpenSSL's pipeline, for every key type and file format.
@Suite("Public-key pins against OpenSSL", .openssl)
struct PublicKeyPinTests {
    /// How a key reaches the pin: a certificate or a bare key, PEM or DER.
    enum FileForm: String, CaseIterable, Sendable {
        case certificatePEM = "pem", certificateDER = "der", publicKeyPEM = "pub.pem", publicKeyDER = "pub.der"
    }

    @Test(arguments: CertificateMaterial.KeyType.allCases, FileForm.allCases)
    func thePinOfEachKeyTypeAndFormIsOpenSSLs(type: CertificateMaterial.KeyType, form: FileForm) throws {
        let material = try CertificateMaterial.get()
        let expected = try #require(material.pins[type])
        let pin = try PublicKeyPin(ofFile: material.file("\(type.rawValue).\(form.rawValue)"))
        #expect(pin.description == expected)
    }

    @Test(arguments: CertificateMaterial.KeyType.allCases)
    func eachKeyTypeIsRecognizedWithItsSize(type: CertificateMaterial.KeyType) throws {
        let material = try CertificateMaterial.get()
        let certificate = try #require(try CertificateFile.read(material.file("\(type.rawValue).pem")).certificates.first)
        let expected: SubjectPublicKeyInfo.Algorithm = switch type {
        case .rsa: .rsa(bits: 2048)
        case .p256: .ecP256
        case .p384: .ecP384
        case .ed25519: .ed25519
        }
        #expect(certificate.publicKey.algorithm == expected)
        #expect(certificate.commonName == "convey-\(type.rawValue)")
        // The same key read from its own file is the same SubjectPublicKeyInfo, byte for byte.
        let key = try CertificateFile.read(material.file("\(type.rawValue).pub.der")).publicKey
        #expect(key.der == certificate.publicKey.der)
    }

    @Test func anRSAPublicKeyInPKCS1FormPinsAsItsSubjectPublicKeyInfo() throws {
        let material = try CertificateMaterial.get()
        let pin = try PublicKeyPin(ofFile: material.file("rsa.pkcs1.pem"))
        #expect(pin.description == material.pins[.rsa])
    }

    @Test func aBundleIsPinnedByItsFirstCertificateAndTextAroundBlocksIsIgnored() throws {
        let material = try CertificateMaterial.get()
        let dump = try OpenSSL.run(["x509", "-in", "p384.pem", "-text"], in: material.folder)
        let bundle = material.file("bundle.pem")
        try (Data("Some notes before the blocks\n".utf8) + dump + (try Data(contentsOf: material.file("rsa.pem")))).write(to: bundle)
        let file = try CertificateFile.read(bundle)
        #expect(file.certificates.count == 2)
        #expect(try PublicKeyPin(ofFile: bundle).description == material.pins[.p384])
    }

    @Test func aPrivateKeyFileIsNotAPublicKeyFile() throws {
        let material = try CertificateMaterial.get()
        let error = #expect(throws: CertificateError.self) { try PublicKeyPin(ofFile: material.file("p256.key")) }
        #expect(error?.reason == "it holds no certificate and no public key")
        #expect(error?.source == material.file("p256.key").path(percentEncoded: false))
    }

    @Test func aMissingFileAndAnEmptyOneSayWhatIsWrong() throws {
        let folder = try OpenSSL.scratchFolder("pins")
        let missing = #expect(throws: CertificateError.self) { try PublicKeyPin(ofFile: folder.appending(path: "none.pem")) }
        #expect(missing?.reason == "there is no such file")
        try Data().write(to: folder.appending(path: "empty.der"))
        let empty = #expect(throws: CertificateError.self) { try PublicKeyPin(ofFile: folder.appending(path: "empty.der")) }
        #expect(empty?.reason.hasPrefix("it is neither PEM nor a DER certificate or public key") == true)
    }

    @Test func pinTextRoundTripsAndRefusesOtherText() throws {
        let digest = Data((0..<32).map { UInt8($0) })
        let pin = try #require(PublicKeyPin("sha256//" + digest.base64EncodedString()))
        #expect(pin.sha256 == digest)
        #expect(PublicKeyPin(pin.description) == pin)
        #expect(PublicKeyPin("sha256//" + Data(count: 31).base64EncodedString()) == nil)
        #expect(PublicKeyPin("SHA256//" + digest.base64EncodedString()) == nil)
    }
}
