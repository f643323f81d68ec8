@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// TLS, proxy and HTTP-version options, spelled as curl spells them; they become the server's
/// `tls`, `proxy` and `httpVersion` (see Docs/tls-and-proxies.md).
struct ConnectionOptions: Sendable {
    static let options: [OptionSpec] = [
        .cacert, .cacertAdd, .pinnedPublicKey, .cert, .key, .certType, .pass, .tlsv1_2, .tlsv1_3, .insecure,
        .proxy, .noProxy, .http1_1, .http2, .http2PriorKnowledge, .connectTimeout,
    ]

    var tls = TLSConfiguration()
    var proxy = ProxyConfiguration.environment
    var httpVersion = HTTPVersionPreference.automatic
    /// `--connect-timeout`: how long connecting may take, on the curl transport.
    var connectTimeout: Duration?

    init() {}

    /// Reads the options; `target` is where the first request goes (for `--noproxy` without `-x`).
    init(_ arguments: ParsedArguments, target: URL?, command: String,
         environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) {
        if arguments.has(.cacert), arguments.has(.cacertAdd) {
            throw UsageError(message: "choose --cacert or --cacert-add, not both", command: command)
        }
        if let file = arguments.value(.cacert) { (tls.certificateAuthoritiesFile, tls.trustsSystemCertificateAuthorities) = (URL(filePath: file), false) }
        if let file = arguments.value(.cacertAdd) { tls.certificateAuthoritiesFile = URL(filePath: file) }
        // A text that is not a pin fails every request, naming it, as a pin from an app's configuration does.
        for text in arguments.all(.pinnedPublicKey).flatMap({ $0.split(separator: ";") }) {
            tls.pinnedPublicKeys.append(String(text))
        }
        tls.clientCertificate = try Self.clientCertificate(arguments, command: command)
        tls.requiresTLS13 = arguments.has(.tlsv1_3)
        tls.disablesCertificateVerificationInsecurely = arguments.has(.insecure)
        let excluded = arguments.value(.noProxy).map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } } ?? []
        if let text = arguments.value(.proxy) {
            guard let proxy = ProxyConfiguration(url: text, excludedHosts: excluded) else {
                throw UsageError(message: "-x: not an http:// or socks5:// proxy URL with a host", command: command)
            }
            self.proxy = proxy
        } else if excluded == ["*"] {
            proxy = .direct
        } else if !excluded.isEmpty, let text = Self.environmentProxy(for: target, environment: environment) {
            // As curl: the hosts are exceptions to the environment's proxy, which is then named explicitly.
            guard let proxy = ProxyConfiguration(url: text, excludedHosts: excluded) else {
                throw UsageError(message: "--noproxy: the environment's proxy is not an http:// or socks5:// URL with a host", command: command)
            }
            self.proxy = proxy
        }
        let versions = [OptionSpec.http1_1, .http2, .http2PriorKnowledge].filter(arguments.has)
        guard versions.count <= 1 else { throw UsageError(message: "choose one HTTP version option", command: command) }
        switch versions.first?.key {
        case OptionSpec.http1_1.key: httpVersion = .http1_1
        case OptionSpec.http2PriorKnowledge.key: httpVersion = .http2PriorKnowledge
        default: httpVersion = .automatic
        }
        connectTimeout = try arguments.value(.connectTimeout).map { text throws(UsageError) in
            try RequestOptions.seconds(text, option: "--connect-timeout", command: command)
        }
    }

    /// The proxy the environment names for `url`'s scheme, as curl reads it: `http_proxy` (lower
    /// case only) for http, `https_proxy` or `HTTPS_PROXY` for https, else `all_proxy` or `ALL_PROXY`.
    static func environmentProxy(for url: URL?, environment: [String: String]) -> String? {
        let names = url?.scheme?.lowercased() == "https" ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy"]
        return (names + ["all_proxy", "ALL_PROXY"]).lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
    }

    private static func clientCertificate(_ arguments: ParsedArguments, command: String) throws(UsageError) -> ClientCertificate? {
        guard let file = arguments.value(.cert) else {
            if arguments.has(.key) || arguments.has(.pass) || arguments.has(.certType) {
                throw UsageError(message: "--key, --pass and --cert-type need --cert", command: command)
            }
            return nil
        }
        let passphrase = arguments.value(.pass)
        switch arguments.value(.certType)?.uppercased() ?? "PEM" {
        case "PEM":
            return ClientCertificate(certificateFile: URL(filePath: file), keyFile: arguments.value(.key).map { URL(filePath: $0) },
                                     passphrase: passphrase)
        case "P12":
            guard !arguments.has(.key) else { throw UsageError(message: "--key does not apply to a P12 certificate", command: command) }
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

extension OptionSpec {
    static let cacert = OptionSpec(["--cacert"], value: "FILE", curl: .same, help: "trust only the certificate authorities in this PEM file")
    static let cacertAdd = OptionSpec(["--cacert-add"], value: "FILE", curl: .harnessOnly,
                                      help: "trust the certificate authorities in this PEM file as well as the system's")
    static let pinnedPublicKey = OptionSpec(["--pinnedpubkey"], value: "sha256//BASE64", curl: .differs("sha256// hashes only, no key file"),
                                            help: "require one of these public keys (';'-separated or repeated)")
    static let cert = OptionSpec(["--cert"], value: "FILE", curl: .differs("no ':passphrase' suffix: use --pass"),
                                 help: "client certificate: PEM (key in it or --key), or PKCS#12 with --cert-type P12")
    static let key = OptionSpec(["--key"], value: "FILE", curl: .same, help: "the client certificate's private key (PEM)")
    static let certType = OptionSpec(["--cert-type"], value: "PEM|P12", curl: .differs("PEM and P12 only"), help: "how --cert is stored (default PEM)")
    static let pass = OptionSpec(["--pass"], value: "PHRASE", curl: .same, help: "the passphrase of the key or PKCS#12 file (never printed)")
    static let tlsv1_2 = OptionSpec(["--tlsv1.2"], curl: .same, help: "accept TLS 1.2 or later (the default)")
    static let tlsv1_3 = OptionSpec(["--tlsv1.3"], curl: .same, help: "accept TLS 1.3 only")
    static let insecure = OptionSpec(["-k", "--insecure"], curl: .differs("also warns on stderr and in --output-json"),
                                     help: "accept any certificate (DANGEROUS: for local test servers only)")
    static let proxy = OptionSpec(["-x", "--proxy"], value: "URL", curl: .differs("http:// and socks5:// (socks5h://) proxies only"),
                                  help: "use this proxy: [http://][user:pass@]host[:port] or socks5://…")
    static let noProxy = OptionSpec(["--noproxy"], value: "HOSTS", curl: .same,
                                    help: "reach these hosts directly, bypassing -x or the environment's proxy (comma-separated; '*' for every host)")
    static let http1_1 = OptionSpec(["--http1.1"], curl: .same, help: "use HTTP/1.1 only")
    static let http2 = OptionSpec(["--http2"], curl: .same, help: "use HTTP/2 over TLS when offered (the default)")
    static let http2PriorKnowledge = OptionSpec(["--http2-prior-knowledge"], curl: .same, help: "use HTTP/2 without asking (cleartext h2c on http)")
    static let connectTimeout = OptionSpec(["--connect-timeout"], value: "SECONDS",
                                           curl: .differs("curl transport only; URLSession has none, and a warning says so"),
                                           help: "fail when connecting (TCP and TLS) takes longer than this")
}
