@_spi(Tools) import Convey
import Foundation

/// `tls pin FILE`: the `sha256//` pin of a certificate's or public key's file, for
/// `--pinnedpubkey` and `TLSConfiguration.pinnedPublicKeys`.
enum TLSCommand {
    static let command = Command(
        name: "tls",
        synopsis: "tls pin FILE",
        summary: "Prints the sha256// public-key pin of a certificate or public-key file (PEM or DER).",
        details: """
            pin FILE     prints sha256// and the base64 SHA-256 of the key's SubjectPublicKeyInfo: for
                         a certificate file, its first certificate's key; for a key file (PUBLIC KEY,
                         RSA PUBLIC KEY, or DER), that key. RSA, EC P-256 and P-384 and Ed25519 keys
                         are checked; another algorithm's key is pinned as it is. The same as
                         openssl x509 -pubkey -noout | openssl pkey -pubin -outform der \\
                                 | openssl dgst -sha256 -binary | base64

            A file that is neither, or is damaged, exits 5 with what is wrong and at which byte.

            Example:
              convey-harness get https://api.example.com/ --pinnedpubkey "$(convey-harness tls pin server.pem)"
            """,
        options: [],
        run: { arguments, settings in run(arguments, console: settings.console) })

    private static func run(_ arguments: ParsedArguments, console: Console) -> ExitCode {
        let positionals = arguments.positionals
        guard positionals.first == "pin" else {
            return console.report(UsageError(message: "tls needs pin FILE", command: "tls"))
        }
        guard positionals.count == 2 else {
            return console.report(UsageError(message: "usage: tls pin FILE", command: "tls"))
        }
        do throws(CertificateError) {
            console.out(try PublicKeyPin(ofFile: URL(filePath: positionals[1])).description)
            return .ok
        } catch {
            console.fail(error.description)
            return .localFailure
        }
    }
}
