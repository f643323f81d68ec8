import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `URLSessionTransport` does with a server's TLS, proxy and HTTP-version settings on each
/// platform, and the refusal, before anything is sent, of what it cannot do there. Decided here,
/// platform-neutrally, so that the Apple platforms' answers are tested on Linux too; the Apple
/// code then only applies them (`URLSessionTransport+Apple.swift`).
///
/// | setting | Linux (FoundationNetworking) | Apple platforms |
/// |---|---|---|
/// | trust roots, pins, verification off | refused: no TLS challenge reaches the delegate | the server-trust challenge (`ServerTrustPolicy`) |
/// | `requiresTLS13` | refused | `tlsMinimumSupportedProtocolVersion` |
/// | client certificate | refused | PKCS#12; PEM refused (the Security framework makes an identity from PKCS#12 or from keychain items only) |
/// | `.direct`, HTTP proxy | refused: FoundationNetworking has no proxy settings | `connectionProxyDictionary`, a 407 answered with the credentials |
/// | HTTP proxy tunnelling plain http, SOCKS5 | refused | `proxyConfigurations` (iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1); refused before |
/// | `httpVersion` `.http1_1`, `.http2PriorKnowledge` | refused: URLSession has no switch | refused |
/// | `httpVersion` `.http3` | as `.automatic` (its libcurl has no HTTP/3) | `assumesHTTP3Capable` |
struct URLSessionSettings: Sendable {
    /// Where the transport runs.
    enum Platform: Sendable, Hashable {
        /// FoundationNetworking, over libcurl.
        case linux
        /// An Apple platform; `proxyConfigurations` tells whether
        /// `URLSessionConfiguration.proxyConfigurations` exists there.
        case apple(proxyConfigurations: Bool)

        /// This process's platform.
        static var current: Platform {
            #if canImport(FoundationNetworking)
            return .linux
            #else
            if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *) {
                return .apple(proxyConfigurations: true)
            }
            return .apple(proxyConfigurations: false)
            #endif
        }
    }

    /// Why every request fails: what cannot be honoured, and the code it fails with.
    struct Refusal: Sendable, Hashable {
        let code: URLError.Code
        let message: String

        var error: URLError {
            URLError(code, userInfo: [NSLocalizedDescriptionKey: message])
        }
    }

    /// The refusal of `tls`, `proxy` and `httpVersion` on `platform`, or `nil` when the
    /// transport honours them all. A TLS setting fails with `secureConnectionFailed`, a proxy or
    /// version setting alone with `unsupportedURL`; neither is transient, so no retry repeats it.
    static func refusal(tls: TLSConfiguration, proxy: ProxyConfiguration, httpVersion: HTTPVersionPreference,
                        on platform: Platform) -> Refusal? {
        if let reason = tls.unusableReason {
            return Refusal(code: .secureConnectionFailed, message: "URLSessionTransport cannot connect: \(reason); nothing was sent")
        }
        if let reason = proxy.unusableReason {
            return Refusal(code: .unsupportedURL, message: "URLSessionTransport cannot connect: \(reason); nothing was sent")
        }
        var tlsReasons: [String] = []
        var otherReasons: [String] = []
        switch platform {
        case .linux:
            tlsReasons = tls.featuresBeyondDefault
            if proxy != .environment { otherReasons.append("an explicit proxy setting (\(proxy))") }
        case .apple(let proxyConfigurations):
            if tls.clientCertificate?.format == .pem {
                tlsReasons.append("a PEM client certificate: the Security framework makes an identity only from a PKCS#12 bundle or from "
                    + "keychain items, which Convey does not add to the keychain; convert it with "
                    + "`openssl pkcs12 -export -legacy -in cert.pem -inkey key.pem -out client.p12` and use ClientCertificate(pkcs12File:passphrase:)")
            }
            if case .through(let through) = proxy.route {
                if !(1...65535).contains(through.port) {
                    otherReasons.append("a proxy on port \(through.port)")
                } else if !proxyConfigurations {
                    if through.kind == .socks5 {
                        otherReasons.append("a SOCKS5 proxy, which URLSession takes only through proxyConfigurations (iOS 17, macOS 14, tvOS 17, watchOS 10)")
                    } else if through.tunnelsPlainHTTP {
                        otherReasons.append("tunnelling plain http through the proxy, which URLSession does only through proxyConfigurations "
                            + "(iOS 17, macOS 14, tvOS 17, watchOS 10)")
                    }
                }
            }
        }
        switch httpVersion {
        case .http1_1: otherReasons.append("httpVersion .http1_1: URLSession chooses the HTTP version itself and has no switch for HTTP/1.1 only")
        case .http2PriorKnowledge: otherReasons.append("httpVersion .http2PriorKnowledge: URLSession never speaks HTTP/2 without negotiating it")
        case .automatic, .http3: break
        }
        let reasons = tlsReasons + otherReasons
        guard !reasons.isEmpty else { return nil }
        let advice = platform == .linux ? " (FoundationNetworking offers no hook for this; CurlTransport, the Linux default, does all of it)" : ""
        let subject = platform == .linux ? "URLSessionTransport on Linux" : "URLSessionTransport"
        return Refusal(code: tlsReasons.isEmpty ? .unsupportedURL : .secureConnectionFailed,
                       message: "\(subject) cannot honour \(reasons.joined(separator: "; ")); nothing was sent\(advice)")
    }

    /// The entries of `connectionProxyDictionary` for a proxy on Apple platforms, keyed by the
    /// strings CFNetwork's constants stand for (`kCFNetworkProxiesHTTPEnable` is `HTTPEnable`;
    /// the HTTPS keys have no constant on iOS but are read there too): an empty dictionary for
    /// `.direct`, none (`nil`, the system's settings) for `.environment`. An HTTP proxy forwards
    /// plain http and tunnels https with `CONNECT`; SOCKS5, and an HTTP proxy that tunnels
    /// everything, go through `proxyConfigurations` instead, so they have none here either.
    static func connectionProxyDictionary(for proxy: ProxyConfiguration) -> [String: ProxyDictionaryValue]? {
        switch proxy.route {
        case .environment:
            return nil
        case .direct:
            return [:]
        case .through(let through):
            guard through.kind == .http, !through.tunnelsPlainHTTP else { return nil }
            return [
                "HTTPEnable": .number(1), "HTTPProxy": .text(through.host), "HTTPPort": .number(through.port),
                "HTTPSEnable": .number(1), "HTTPSProxy": .text(through.host), "HTTPSPort": .number(through.port),
            ]
        }
    }

    /// A value of `connectionProxyDictionary`.
    enum ProxyDictionaryValue: Sendable, Hashable {
        case text(String)
        case number(Int)

        /// The value as CFNetwork reads it.
        var object: Any {
            switch self {
            case .text(let text): text
            case .number(let number): NSNumber(value: number)
            }
        }
    }
}
