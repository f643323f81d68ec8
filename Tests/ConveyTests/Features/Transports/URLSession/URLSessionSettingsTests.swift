import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// What URLSessionTransport honours and refuses on each platform, decided platform-neutrally so
/// that the Apple platforms' answers are checked here too.
@Suite("URLSession settings by platform")
struct URLSessionSettingsTests {
    private let pin = "sha256//" + Data(count: 32).base64EncodedString()
    private let file = URL(filePath: "/ca/private.pem")
    private let apple = URLSessionSettings.Platform.apple(proxyConfigurations: true)
    private let olderApple = URLSessionSettings.Platform.apple(proxyConfigurations: false)

    private func refusal(_ tls: TLSConfiguration = TLSConfiguration(), _ proxy: ProxyConfiguration = .environment,
                         _ version: HTTPVersionPreference = .automatic, on platform: URLSessionSettings.Platform) -> URLSessionSettings.Refusal? {
        URLSessionSettings.refusal(tls: tls, proxy: proxy, httpVersion: version, on: platform)
    }

    @Test func theDefaultsAreHonouredEverywhere() {
        for platform in [URLSessionSettings.Platform.linux, apple, olderApple] {
            #expect(refusal(on: platform) == nil)
            #expect(refusal(TLSConfiguration(), .environment, .http3, on: platform) == nil)
        }
    }

    @Test func applePlatformsHonourTrustPinsTLS13VerificationOffAndPKCS12() {
        let tls = TLSConfiguration(certificateAuthoritiesFile: file, trustsSystemCertificateAuthorities: false, pinnedPublicKeys: [pin],
                                   requiresTLS13: true, clientCertificate: ClientCertificate(pkcs12File: URL(filePath: "/c.p12")),
                                   disablesCertificateVerificationInsecurely: true)
        #expect(refusal(tls, on: apple) == nil)
        #expect(refusal(tls, on: olderApple) == nil)
    }

    @Test func linuxRefusesEveryTLSSettingNamingEachAndCurl() throws {
        let tls = TLSConfiguration(certificateAuthoritiesFile: file, pinnedPublicKeys: [pin], requiresTLS13: true)
        let refused = try #require(refusal(tls, on: .linux))
        #expect(refused.code == .secureConnectionFailed)
        #expect(refused.message == "URLSessionTransport on Linux cannot honour custom trust roots; public-key pinning; a minimum TLS version; "
            + "nothing was sent (FoundationNetworking offers no hook for this; CurlTransport, the Linux default, does all of it)")
    }

    @Test func aPEMClientCertificateIsRefusedOnApplePlatformsWithTheConversion() throws {
        let tls = TLSConfiguration(clientCertificate: ClientCertificate(certificateFile: URL(filePath: "/c.pem"), keyFile: URL(filePath: "/k.pem")))
        let refused = try #require(refusal(tls, on: apple))
        #expect(refused.code == .secureConnectionFailed)
        #expect(refused.message.hasPrefix("URLSessionTransport cannot honour a PEM client certificate: the Security framework makes an identity only from a PKCS#12 bundle"))
        #expect(refused.message.contains("openssl pkcs12 -export -legacy"))
    }

    @Test func proxiesOnApplePlatformsDependOnProxyConfigurations() throws {
        let http = ProxyConfiguration.http(host: "proxy.example", port: 3128, username: "u", password: "p", excludedHosts: [".internal"])
        let socks = ProxyConfiguration.socks5(host: "proxy.example", port: 1080, username: "u", password: "p")
        let tunnelling = ProxyConfiguration.http(host: "proxy.example", port: 3128, tunnelsPlainHTTP: true)
        for proxy in [ProxyConfiguration.direct, http, socks, tunnelling] {
            #expect(refusal(TLSConfiguration(), proxy, on: apple) == nil, "\(proxy)")
        }
        #expect(refusal(TLSConfiguration(), .direct, on: olderApple) == nil)
        #expect(refusal(TLSConfiguration(), http, on: olderApple) == nil)
        let socksRefused = try #require(refusal(TLSConfiguration(), socks, on: olderApple))
        #expect(socksRefused.code == .unsupportedURL)
        #expect(socksRefused.message.contains("a SOCKS5 proxy, which URLSession takes only through proxyConfigurations (iOS 17, macOS 14"))
        #expect(try #require(refusal(TLSConfiguration(), tunnelling, on: olderApple)).message.contains("tunnelling plain http"))
        let linux = try #require(refusal(TLSConfiguration(), http, on: .linux))
        #expect(linux.code == .unsupportedURL)
        #expect(linux.message.contains("an explicit proxy setting (http://proxy.example:3128 (with credentials), not for .internal)"))
    }

    @Test func versionsURLSessionCannotChooseAreRefusedEverywhere() throws {
        for platform in [URLSessionSettings.Platform.linux, apple] {
            let http11 = try #require(refusal(TLSConfiguration(), .environment, .http1_1, on: platform))
            #expect(http11.code == .unsupportedURL)
            #expect(http11.message.contains("httpVersion .http1_1: URLSession chooses the HTTP version itself"))
            #expect(try #require(refusal(TLSConfiguration(), .environment, .http2PriorKnowledge, on: platform)).message
                .contains("never speaks HTTP/2 without negotiating it"))
        }
    }

    @Test func settingsNoTransportCanUseAreRefusedForWhatTheyAre() throws {
        let nothing = try #require(refusal(TLSConfiguration(trustsSystemCertificateAuthorities: false), on: apple))
        #expect(nothing.message.contains("no certificate authority is trusted"))
        let badPin = try #require(refusal(TLSConfiguration(pinnedPublicKeys: ["sha256//nope"]), on: apple))
        #expect(badPin.message.contains(#"the pinned public key "sha256//nope" is not sha256//"#))
        let badHost = try #require(refusal(TLSConfiguration(), .http(host: "p", port: 1, excludedHosts: ["h:80"]), on: apple))
        #expect(badHost.message.contains(#"the excluded proxy host "h:80" names a port"#))
        #expect(try #require(refusal(TLSConfiguration(), .http(host: "p", port: 70000), on: apple)).message.contains("a proxy on port 70000"))
    }

    @Test func theProxyDictionaryForwardsHTTPAndTunnelsHTTPS() {
        let http = ProxyConfiguration.http(host: "proxy.example", port: 3128, username: "u", password: "secret")
        let dictionary = URLSessionSettings.connectionProxyDictionary(for: http)
        #expect(dictionary == ["HTTPEnable": .number(1), "HTTPProxy": .text("proxy.example"), "HTTPPort": .number(3128),
                               "HTTPSEnable": .number(1), "HTTPSProxy": .text("proxy.example"), "HTTPSPort": .number(3128)])
        // Credentials never go into the dictionary: they answer the proxy's 407.
        #expect(!"\(dictionary ?? [:])".contains("secret"))
        #expect(URLSessionSettings.connectionProxyDictionary(for: .direct) == [:])
        #expect(URLSessionSettings.connectionProxyDictionary(for: .environment) == nil)
        #expect(URLSessionSettings.connectionProxyDictionary(for: .socks5(host: "s", port: 1080)) == nil)
        #expect(URLSessionSettings.connectionProxyDictionary(for: .http(host: "p", port: 1, tunnelsPlainHTTP: true)) == nil)
    }
}
