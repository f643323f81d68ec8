import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey
#if os(Linux) && canImport(CConveyCurlShim)
import CCurl
#endif

/// Pins, proxies and certificates as values: parsing, and secrets that never reach text.
@Suite("TLS and proxy settings")
struct TLSConfigurationTests {
    @Test func aPinIsSha256AndThirtyTwoBytesOfBase64() throws {
        let digest = Data((0..<32).map { UInt8($0) })
        let pin = try #require(PublicKeyPin("sha256//" + digest.base64EncodedString()))
        #expect(pin.sha256 == digest)
        #expect(pin.description == "sha256//" + digest.base64EncodedString())
        #expect(PublicKeyPin("sha1//" + digest.base64EncodedString()) == nil)
        #expect(PublicKeyPin("sha256//" + Data(count: 20).base64EncodedString()) == nil)
        #expect(PublicKeyPin("sha256//not base64!") == nil)
    }

    @Test func aProxyURLGivesKindHostPortAndCredentials() throws {
        let proxy = try #require(Proxy(url: "http://me:p%40ss@proxy.example:3128", excludedHosts: ["internal.example"]))
        #expect(proxy == Proxy(.http, host: "proxy.example", port: 3128, username: "me", password: "p@ss", excludedHosts: ["internal.example"]))
        #expect(Proxy(url: "socks5://10.0.0.1:1081")?.kind == .socks5)
        #expect(Proxy(url: "proxy.example:8080")?.address == "http://proxy.example:8080")
        #expect(Proxy(url: "ftp://proxy.example") == nil)
    }

    @Test func theProxyConstructorsAgreeWithTheURLForm() throws {
        #expect(ProxyConfiguration(url: "http://me:p%40ss@proxy.example:3128", excludedHosts: ["internal.example"])
                    == .http(host: "proxy.example", port: 3128, username: "me", password: "p@ss", excludedHosts: ["internal.example"]))
        #expect(ProxyConfiguration(url: "socks5h://10.0.0.1:1081") == .socks5(host: "10.0.0.1", port: 1081))
        #expect(ProxyConfiguration(url: "ftp://proxy.example") == nil)
        #expect(ProxyConfiguration.http(host: "proxy.example", port: 8080).description == "http://proxy.example:8080")
        #expect(ProxyConfiguration.environment.description == "environment")
        #expect(ProxyConfiguration.direct != .environment)
    }

    @Test func proxyCredentialsNeverReachText() throws {
        let proxy = try #require(Proxy(url: "http://someone:hunter2@proxy.example:3128"))
        let configuration = ProxyConfiguration.http(host: "proxy.example", port: 3128, username: "someone", password: "hunter2")
        var dumped = ""
        dump(proxy, to: &dumped)
        dump(configuration, to: &dumped)
        for text in [proxy.description, configuration.description, String(reflecting: proxy), String(reflecting: configuration), dumped] {
            #expect(!text.contains("hunter2"))
            #expect(!text.contains("someone"))
        }
        #expect(proxy.description == "http://proxy.example:3128 (with credentials)")
    }

    @Test func theClientPassphraseNeverReachesText() {
        let certificate = ClientCertificate(pkcs12File: URL(filePath: "/keys/client.p12"), passphrase: "open-sesame")
        var dumped = ""
        dump(certificate, to: &dumped)
        for text in [certificate.description, String(reflecting: certificate), dumped] {
            #expect(!text.contains("open-sesame"))
        }
        #expect(certificate.description == "pkcs12 certificate /keys/client.p12, with a passphrase")
    }

    #if os(Linux) && canImport(CConveyCurlShim)
    @Test func trustOnlyClearsTheSystemsDirectoryAndAddedKeepsIt() {
        let file = URL(filePath: "/ca/private.pem")
        let only = CurlConnectionOptions.settings(tls: TLSConfiguration(trustRoots: .only(certificatesFile: file)), proxy: .environment)
        #expect(only.contains(.text(CURLOPT_CAINFO, "/ca/private.pem")))
        #expect(only.contains(.text(CURLOPT_CAPATH, nil)))
        let added = CurlConnectionOptions.settings(tls: TLSConfiguration(trustRoots: .systemAnd(certificatesFile: file)), proxy: .environment)
        #expect(!added.contains { if case .text(CURLOPT_CAPATH, _) = $0 { true } else { false } })
    }

    @Test func aPinThatIsNotOneOrNoTrustAtAllFailsEveryRequestBeforeItIsSent() async throws {
        let url = try #require(URL(string: "https://127.0.0.1:9/never"))
        let badPin = CurlTransport(configuration: .init(tls: TLSConfiguration(pinnedPublicKeys: ["sha256//not-a-digest"])))
        let pinError = await #expect(throws: URLError.self) { try await badPin.send(url) }
        #expect(pinError?.localizedDescription.contains(#"the pinned public key "sha256//not-a-digest" is not sha256// followed by"#) == true)
        let trustingNothing = CurlTransport(configuration: .init(tls: TLSConfiguration(trustsSystemCertificateAuthorities: false)))
        let trustError = await #expect(throws: URLError.self) { try await trustingNothing.send(url) }
        #expect(trustError?.localizedDescription.contains("no certificate authority is trusted") == true)
    }

    @Test func theTrustPropertiesSayWhichRootsAreTrusted() {
        let file = URL(filePath: "/ca/private.pem")
        #expect(TLSConfiguration().trustRoots == .system)
        #expect(TLSConfiguration(certificateAuthoritiesFile: file).trustRoots == .systemAnd(certificatesFile: file))
        #expect(TLSConfiguration(certificateAuthoritiesFile: file, trustsSystemCertificateAuthorities: false).trustRoots == .only(certificatesFile: file))
        #expect(TLSConfiguration(trustsSystemCertificateAuthorities: false).trustRoots == .nothing)
    }

    @Test func directIgnoresTheEnvironmentAndAnExplicitProxyKeepsCredentialsOutOfItsAddress() throws {
        #expect(CurlConnectionOptions.settings(tls: TLSConfiguration(), proxy: .direct).contains(.text(CURLOPT_PROXY, "")))
        let proxy = try #require(Proxy(url: "http://me:secret@127.0.0.1:3128"))
        let settings = CurlConnectionOptions.settings(tls: TLSConfiguration(), proxy: .through(proxy))
        #expect(settings.contains(.text(CURLOPT_PROXY, "http://127.0.0.1:3128")))
        #expect(settings.contains(.secret(CURLOPT_PROXYPASSWORD, "secret")))
        #expect(!settings.map(\.description).joined().contains("secret"))
    }
    #endif

    @Test func urlSessionRefusesWhatItCannotHonourAndSendsNothing() async throws {
        let transport = URLSessionTransport(tls: TLSConfiguration(pinnedPublicKeys: [try #require(PublicKeyPin(sha256: Data(count: 32))).description]))
        let url = try #require(URL(string: "https://127.0.0.1:9/never"))
        let error = await #expect(throws: URLError.self) { try await transport.send(url) }
        #expect(error?.code == .secureConnectionFailed)
        #expect(error?.localizedDescription.contains("public-key pinning") == true)
        #expect(error?.failingURL == url)
        let proxied = URLSessionTransport(proxy: .direct)
        let proxyError = await #expect(throws: URLError.self) { try await proxied.send(url) }
        #expect(proxyError?.localizedDescription.contains("explicit proxy setting (direct)") == true)
        #expect(proxyError?.code == .unsupportedURL)
        #if canImport(FoundationNetworking)
        // FoundationNetworking sends no client-certificate challenge: refused on Linux, with the
        // Linux transport that does it named (never on Apple platforms, which have no CurlTransport).
        let withCertificate = URLSessionTransport(tls: TLSConfiguration(clientCertificate: ClientCertificate(pkcs12File: URL(filePath: "/none.p12"))))
        let certificateError = await #expect(throws: URLError.self) { try await withCertificate.send(url) }
        #expect(certificateError?.code == .secureConnectionFailed)
        #expect(certificateError?.localizedDescription.contains("a client certificate") == true)
        #expect(certificateError?.localizedDescription.contains("CurlTransport") == true)
        #endif
    }
}
