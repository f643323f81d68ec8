import Convey
import Foundation

/// TLS, proxy and HTTP-version options, spelled as curl spells them; they become the server's
/// `tls`, `proxy` and `httpVersion` (see Docs/tls-and-proxies.md).
struct ConnectionOptions: Sendable {
    static let options: [OptionSpec] = [
        OptionSpec(["--cacert"], value: "FILE", help: "trust only the certificate authorities in this PEM file"),
        OptionSpec(["--cacert-add"], value: "FILE", help: "trust the certificate authorities in this PEM file as well as the system's"),
        OptionSpec(["--pinnedpubkey"], value: "sha256//BASE64", help: "require one of these public keys (';'-separated or repeated)"),
        OptionSpec(["--cert"], value: "FILE", help: "client certificate: PEM (key in it or --key), or PKCS#12 with --cert-type P12"),
        OptionSpec(["--key"], value: "FILE", help: "the client certificate's private key (PEM)"),
        OptionSpec(["--cert-type"], value: "PEM|P12", help: "how --cert is stored (default PEM)"),
        OptionSpec(["--pass"], value: "PHRASE", help: "the passphrase of the key or PKCS#12 file (never printed)"),
        OptionSpec(["--tlsv1.2"], help: "accept TLS 1.2 or later (the default)"),
        OptionSpec(["--tlsv1.3"], help: "accept TLS 1.3 only"),
        OptionSpec(["-k", "--insecure"], help: "accept any certificate (DANGEROUS: for local test servers only)"),
        OptionSpec(["-x", "--proxy"], value: "URL", help: "use this proxy: http://[user:pass@]host:port or socks5://…"),
        OptionSpec(["--noproxy"], value: "HOSTS", help: "reach these hosts directly (comma-separated; '*' ignores every proxy, the environment's too)"),
        OptionSpec(["--http1.1"], help: "use HTTP/1.1 only"),
        OptionSpec(["--http2"], help: "use HTTP/2 over TLS when offered (the default)"),
        OptionSpec(["--http2-prior-knowledge"], help: "use HTTP/2 without asking (cleartext h2c on http)"),
    ]

    var tls = TLSConfiguration()
    var proxy = ProxyConfiguration.environment
    var httpVersion = HTTPVersionPreference.automatic

    init() {}

    init(_ arguments: ParsedArguments, command: String) throws(UsageError) {
        if arguments.has("cacert"), arguments.has("cacert-add") {
            throw UsageError(message: "choose --cacert or --cacert-add, not both", command: command)
        }
        if let file = arguments.value("cacert") { (tls.certificateAuthoritiesFile, tls.trustsSystemCertificateAuthorities) = (URL(filePath: file), false) }
        if let file = arguments.value("cacert-add") { tls.certificateAuthoritiesFile = URL(filePath: file) }
        for text in arguments.all("pinnedpubkey").flatMap({ $0.split(separator: ";") }) {
            tls.pinnedPublicKeys.append(String(text))
        }
        tls.clientCertificate = try Self.clientCertificate(arguments, command: command)
        tls.requiresTLS13 = arguments.has("tlsv1.3")
        tls.disablesCertificateVerificationInsecurely = arguments.has("insecure")
        let excluded = arguments.value("noproxy").map { $0.split(separator: ",").map(String.init) } ?? []
        if let text = arguments.value("proxy") {
            guard let proxy = ProxyConfiguration(url: text, excludedHosts: excluded) else {
                throw UsageError(message: "-x: not an http:// or socks5:// proxy URL with a host", command: command)
            }
            self.proxy = proxy
        } else if excluded == ["*"] {
            proxy = .direct
        } else if !excluded.isEmpty {
            throw UsageError(message: "--noproxy without -x takes only '*' (the environment's no_proxy lists hosts)", command: command)
        }
        let versions = ["http1.1", "http2", "http2-prior-knowledge"].filter(arguments.has)
        guard versions.count <= 1 else { throw UsageError(message: "choose one HTTP version option", command: command) }
        switch versions.first {
        case "http1.1": httpVersion = .http1_1
        case "http2-prior-knowledge": httpVersion = .http2PriorKnowledge
        default: httpVersion = .automatic
        }
    }

    private static func clientCertificate(_ arguments: ParsedArguments, command: String) throws(UsageError) -> ClientCertificate? {
        guard let file = arguments.value("cert") else {
            if arguments.has("key") || arguments.has("pass") || arguments.has("cert-type") {
                throw UsageError(message: "--key, --pass and --cert-type need --cert", command: command)
            }
            return nil
        }
        let passphrase = arguments.value("pass")
        switch arguments.value("cert-type")?.uppercased() ?? "PEM" {
        case "PEM":
            return ClientCertificate(certificateFile: URL(filePath: file), keyFile: arguments.value("key").map { URL(filePath: $0) },
                                     passphrase: passphrase)
        case "P12":
            guard !arguments.has("key") else { throw UsageError(message: "--key does not apply to a P12 certificate", command: command) }
            return ClientCertificate(pkcs12File: URL(filePath: file), passphrase: passphrase)
        default:
            throw UsageError(message: "--cert-type: expected PEM or P12", command: command)
        }
    }

    /// Sets the server's connection settings.
    func apply(to configuration: inout ServerConfiguration) {
        configuration.tls = tls
        configuration.proxy = proxy
        configuration.httpVersion = httpVersion
    }

    /// The warning `--insecure` prints, or `nil` without it.
    var insecureWarning: String? {
        tls.disablesCertificateVerificationInsecurely
            ? "Warning: --insecure: TLS certificates are not verified; anyone on the path can read and change this traffic"
            : nil
    }
}
