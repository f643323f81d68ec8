import Foundation
import Testing

/// Keys, certificates and a chain made once per test process with the `openssl` command, and
/// what OpenSSL says their pins are.
struct CertificateMaterial: Sendable {
    /// A key type the tests cover.
    enum KeyType: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case rsa, p256, p384, ed25519

        var testDescription: String { rawValue }

        /// `openssl genpkey` options for a key of this type.
        var genpkeyOptions: [String] {
            switch self {
            case .rsa: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
            case .p256: ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
            case .p384: ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"]
            case .ed25519: ["-algorithm", "ED25519"]
            }
        }
    }

    /// The folder holding the files: `TYPE.key`, `TYPE.pem` (certificate), `TYPE.der`,
    /// `TYPE.pub.pem`, `TYPE.pub.der`, `rsa.pkcs1.pem`, and the chain's `root.pem`,
    /// `intermediate.pem`, `leaf.pem` (each also `.der`).
    let folder: URL
    /// OpenSSL's pin of each key type's certificate, from the pipeline the docs give.
    let pins: [KeyType: String]
    /// OpenSSL's pins of the chain's certificates.
    let chainPins: (leaf: String, intermediate: String, root: String)

    /// Made on first use; shared by every test.
    static let shared: Result<CertificateMaterial, any Error> = Result { try CertificateMaterial() }

    static func get() throws -> CertificateMaterial { try shared.get() }

    private init() throws {
        folder = try OpenSSL.scratchFolder("certificates")
        var pins: [KeyType: String] = [:]
        for type in KeyType.allCases {
            let name = type.rawValue
            try OpenSSL.run(["genpkey"] + type.genpkeyOptions + ["-out", "\(name).key"], in: folder)
            try OpenSSL.run(["req", "-x509", "-key", "\(name).key", "-subj", "/CN=convey-\(name)", "-days", "2", "-out", "\(name).pem"], in: folder)
            try OpenSSL.run(["x509", "-in", "\(name).pem", "-outform", "der", "-out", "\(name).der"], in: folder)
            try OpenSSL.run(["pkey", "-in", "\(name).key", "-pubout", "-out", "\(name).pub.pem"], in: folder)
            try OpenSSL.run(["pkey", "-in", "\(name).key", "-pubout", "-outform", "der", "-out", "\(name).pub.der"], in: folder)
            pins[type] = try Self.opensslPin(ofCertificate: "\(name).pem", in: folder)
        }
        try OpenSSL.run(["rsa", "-in", "rsa.key", "-RSAPublicKey_out", "-out", "rsa.pkcs1.pem"], in: folder)
        self.pins = pins

        // root (RSA) → intermediate (P-256) → leaf (Ed25519).
        let caExtensions = folder.appending(path: "ca.ext")
        try Data("basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n".utf8).write(to: caExtensions)
        try OpenSSL.run(["req", "-x509", "-key", "rsa.key", "-subj", "/CN=Convey Root", "-days", "2",
                         "-addext", "basicConstraints=critical,CA:TRUE", "-out", "root.pem"], in: folder)
        try OpenSSL.run(["req", "-new", "-key", "p256.key", "-subj", "/CN=Convey Intermediate", "-out", "intermediate.csr"], in: folder)
        try OpenSSL.run(["x509", "-req", "-in", "intermediate.csr", "-CA", "root.pem", "-CAkey", "rsa.key", "-set_serial", "2",
                         "-days", "2", "-extfile", "ca.ext", "-out", "intermediate.pem"], in: folder)
        try OpenSSL.run(["req", "-new", "-key", "ed25519.key", "-subj", "/CN=leaf.convey.test", "-out", "leaf.csr"], in: folder)
        try OpenSSL.run(["x509", "-req", "-in", "leaf.csr", "-CA", "intermediate.pem", "-CAkey", "p256.key", "-set_serial", "3",
                         "-days", "2", "-out", "leaf.pem"], in: folder)
        for name in ["root", "intermediate", "leaf"] {
            try OpenSSL.run(["x509", "-in", "\(name).pem", "-outform", "der", "-out", "\(name).der"], in: folder)
        }
        chainPins = (try Self.opensslPin(ofCertificate: "leaf.pem", in: folder),
                     try Self.opensslPin(ofCertificate: "intermediate.pem", in: folder),
                     try Self.opensslPin(ofCertificate: "root.pem", in: folder))
    }

    /// The pin OpenSSL's pipeline gives for a certificate file.
    static func opensslPin(ofCertificate name: String, in folder: URL) throws -> String {
        "sha256//" + (try OpenSSL.shell(
            "openssl x509 -in '\(name)' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64", in: folder))
    }

    func file(_ name: String) -> URL { folder.appending(path: name) }

    /// A file's bytes.
    func bytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: file(name))) }

    /// The chain as a server sends it: leaf first.
    func chain() throws -> [[UInt8]] { try ["leaf.der", "intermediate.der", "root.der"].map(bytes) }
}
