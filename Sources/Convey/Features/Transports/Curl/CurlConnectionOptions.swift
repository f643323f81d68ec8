#if os(Linux) && canImport(CConveyCurlShim)
internal import CConveyCurlShim
internal import CCurl
import Foundation

/// One curl option and its value.
enum CurlSetting: Equatable, CustomStringConvertible {
    /// A `long` option.
    case number(CURLoption, Int)
    /// A string option; `nil` clears it (curl's default, or none).
    case text(CURLoption, String?)
    /// A string option whose value must never be printed (passwords).
    case secret(CURLoption, String)
    /// `CURLOPT_CAINFO_BLOB` pointing at the bundle `CurlConnectionOptions` holds.
    case trustBundle

    var description: String {
        switch self {
        case .number(let option, let value): "\(option.rawValue)=\(value)"
        case .text(let option, let value): "\(option.rawValue)=\(value ?? "nil")"
        case .secret(let option, _): "\(option.rawValue)=<redacted>"
        case .trustBundle: "CAINFO_BLOB"
        }
    }
}

/// The trust, pinning, TLS version, client certificate and proxy options of one transport, as
/// the curl options every one of its handles gets once, when it is made.
///
/// Owns the in-memory trust bundle of `TLSConfiguration.TrustRoots.systemAnd`: the system's CA file and the
/// given one, read once. The bundle outlives every handle that points at it (curl reads it in
/// place), as the pool that owns these options outlives its handles.
final class CurlConnectionOptions: Sendable {
    /// Set on every new handle, in order.
    let settings: [CurlSetting]
    /// Why no request can go out with these options (a trust file that cannot be read), if so.
    let failure: String?
    /// Whether server certificates are verified (not `disablesCertificateVerificationInsecurely`).
    let verifiesCertificates: Bool
    nonisolated(unsafe) private let bundle: UnsafeMutableRawBufferPointer?  // guarded by: never written after init; curl reads it in place

    /// - Parameter systemCAFile: the system's CA bundle, as libcurl reports its default (`CURLINFO_CAINFO`).
    init(tls: TLSConfiguration, proxy: ProxyConfiguration, systemCAFile: String?) {
        var settings = Self.settings(tls: tls, proxy: proxy)
        var failure = tls.unusableReason ?? proxy.unusableReason
        var bundle: UnsafeMutableRawBufferPointer?
        if case .systemAnd(let file) = tls.trustRoots {
            do {
                // curl's CAINFO_BLOB replaces its CA file (the directory, if any, still counts): so
                // the blob carries the system's file as well as the given one.
                var pem = try Data(contentsOf: file)
                if let systemCAFile, let system = try? Data(contentsOf: URL(filePath: systemCAFile)) {
                    pem.append(0x0A)
                    pem.append(system)
                }
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: pem.count, alignment: 1)
                buffer.copyBytes(from: pem)
                bundle = buffer
                settings.append(.trustBundle)
            } catch {
                failure = "the trusted certificates file \(file.path) could not be read: \(error.localizedDescription)"
            }
        }
        self.settings = settings
        self.failure = failure
        verifiesCertificates = !tls.disablesCertificateVerificationInsecurely
        self.bundle = bundle
    }

    deinit { bundle?.deallocate() }

    /// The system's CA file as this libcurl finds it by default (libcurl 7.84 and later report it).
    static let systemCAFile: String? = probe { easy in
        var value: UnsafePointer<CChar>?
        guard convey_curl_easy_getinfo_string(easy, CURLINFO_CAINFO, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    /// Whether this libcurl takes `CURL_HTTP_VERSION_3`: it refuses it unless built with HTTP/3.
    static let libcurlSupportsHTTP3: Bool = probe { easy in
        convey_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_3)) == CURLE_OK
    } ?? false

    /// Runs `body` on a fresh handle of no transport.
    private static func probe<Result>(_ body: (UnsafeMutableRawPointer) -> Result?) -> Result? {
        guard let easy = curl_easy_init() else { return nil }
        defer { curl_easy_cleanup(easy) }
        return body(easy)
    }

    /// The options for `tls` and `proxy`, apart from the trust bundle. Defaults set nothing:
    /// a new handle already has them.
    static func settings(tls: TLSConfiguration, proxy: ProxyConfiguration) -> [CurlSetting] {
        var settings: [CurlSetting] = []
        if case .only(let file) = tls.trustRoots {
            // Without clearing the directory, OpenSSL would still find the system's CAs there.
            settings += [.text(CURLOPT_CAINFO, file.path), .text(CURLOPT_CAPATH, nil)]
        }
        if !tls.pins.isEmpty {
            settings.append(.text(CURLOPT_PINNEDPUBLICKEY, tls.pins.map(\.description).joined(separator: ";")))
        }
        if tls.requiresTLS13 {
            settings.append(.number(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_3)))
        } else {
            settings.append(.number(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2)))
        }
        if tls.disablesCertificateVerificationInsecurely {
            settings += [.number(CURLOPT_SSL_VERIFYPEER, 0), .number(CURLOPT_SSL_VERIFYHOST, 0)]
        }
        if let certificate = tls.clientCertificate {
            settings.append(.text(CURLOPT_SSLCERT, certificate.certificateFile.path))
            switch certificate.format {
            case .pem:
                settings.append(.text(CURLOPT_SSLCERTTYPE, "PEM"))
                if let keyFile = certificate.keyFile {
                    settings += [.text(CURLOPT_SSLKEY, keyFile.path), .text(CURLOPT_SSLKEYTYPE, "PEM")]
                }
            case .pkcs12:
                settings.append(.text(CURLOPT_SSLCERTTYPE, "P12"))
            }
            if let passphrase = certificate.passphrase { settings.append(.secret(CURLOPT_KEYPASSWD, passphrase)) }
        }
        switch proxy.route {
        case .environment:
            break
        case .direct:
            // An empty proxy turns off curl's reading of the environment.
            settings.append(.text(CURLOPT_PROXY, ""))
        case .through(let proxy):
            // Credentials go in their own options, never in the address curl may print.
            settings.append(.text(CURLOPT_PROXY, proxy.address))
            if let username = proxy.username { settings.append(.secret(CURLOPT_PROXYUSERNAME, username)) }
            if let password = proxy.password { settings.append(.secret(CURLOPT_PROXYPASSWORD, password)) }
            // An empty list overrides `no_proxy` from the environment. The list is the one both
            // transports read (`ExcludedProxyHosts`); one it refuses fails the transport instead.
            let excluded = (try? proxy.excluded.get())?.curlList ?? ""
            settings.append(.text(CURLOPT_NOPROXY, excluded))
            if proxy.tunnelsPlainHTTP { settings.append(.number(CURLOPT_HTTPPROXYTUNNEL, 1)) }
        }
        return settings
    }

    /// Sets every option on `easy`; returns the first one curl refused (a libcurl too old for it),
    /// which must stop the transport rather than connect with less protection than asked for.
    func apply(to easy: CurlEasyHandle) -> CurlSetting? {
        for setting in settings {
            let code: CURLcode = switch setting {
            case .number(let option, let value): easy.set(option, value)
            case .text(let option, let value): value.map { easy.set(option, string: $0) } ?? easy.set(option, pointer: nil)
            case .secret(let option, let value): easy.set(option, string: value)
            case .trustBundle: applyBundle(to: easy)
            }
            if code != CURLE_OK { return setting }
        }
        return nil
    }

    private func applyBundle(to easy: CurlEasyHandle) -> CURLcode {
        guard let bundle, let base = bundle.baseAddress else { return CURLE_OK }
        var blob = curl_blob(data: base, len: bundle.count, flags: UInt32(CURL_BLOB_NOCOPY))
        return withUnsafeMutablePointer(to: &blob) { easy.set(CURLOPT_CAINFO_BLOB, pointer: UnsafeMutableRawPointer($0)) }
    }
}

extension HTTPVersionPreference {
    /// `CURLOPT_HTTP_VERSION`'s value.
    var curlValue: Int {
        switch self {
        case .automatic: Int(CURL_HTTP_VERSION_2TLS)
        case .http1_1: Int(CURL_HTTP_VERSION_1_1)
        case .http2PriorKnowledge: Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
        case .http3: Int(CURL_HTTP_VERSION_3)
        }
    }
}
#endif
