import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The hosts a proxy is not used for, read as curl 7.88 reads `--noproxy`.
@Suite("Excluded proxy hosts")
struct ExcludedProxyHostsTests {
    private func excluded(_ list: [String]) throws -> ExcludedProxyHosts {
        try ExcludedProxyHosts(list)
    }

    @Test func anExactNameMatchesItselfInAnyCaseAndWithATrailingDot() throws {
        let hosts = try excluded(["api.example.com"])
        #expect(hosts.excludes(host: "api.example.com"))
        #expect(hosts.excludes(host: "API.Example.COM"))
        #expect(hosts.excludes(host: "api.example.com."))
        #expect(!hosts.excludes(host: "example.com"))
        #expect(!hosts.excludes(host: "api.example.org"))
    }

    @Test func aDomainMatchesItsSubdomainsOnADotBoundaryOnly() throws {
        for entry in ["example.com", ".example.com", "example.com."] {
            let hosts = try excluded([entry])
            #expect(hosts.excludes(host: "example.com"), "\(entry)")
            #expect(hosts.excludes(host: "www.example.com"), "\(entry)")
            #expect(hosts.excludes(host: "a.b.example.com"), "\(entry)")
            #expect(!hosts.excludes(host: "notexample.com"), "\(entry)")
            #expect(!hosts.excludes(host: "example.com.evil.net"), "\(entry)")
        }
    }

    @Test func ipv4AddressesAndNetworksMatchAddressesOnly() throws {
        let hosts = try excluded(["10.0.0.0/8", "192.168.1.7"])
        #expect(hosts.excludes(host: "10.1.2.3"))
        #expect(hosts.excludes(host: "192.168.1.7"))
        #expect(!hosts.excludes(host: "192.168.1.8"))
        #expect(!hosts.excludes(host: "11.0.0.1"))
        // An address never matches a name, even one that resolves to it, nor a name an address.
        #expect(!hosts.excludes(host: "localhost"))
        #expect(!(try excluded(["localhost"])).excludes(host: "127.0.0.1"))
        let partial = try excluded(["172.16.0.0/12"])
        #expect(partial.excludes(host: "172.31.255.255"))
        #expect(!partial.excludes(host: "172.32.0.0"))
    }

    @Test func ipv6AddressesWithOrWithoutBracketsAndNetworks() throws {
        let hosts = try excluded(["::1", "[fd00::]/8"])
        #expect(hosts.excludes(host: "::1"))
        #expect(hosts.excludes(host: "[::1]"))
        #expect(hosts.excludes(host: "fd12:3456::1"))
        #expect(!hosts.excludes(host: "fe80::1"))
        #expect(!hosts.excludes(host: "127.0.0.1"))
        #expect(hosts.curlList == "::1,fd00::/8")
    }

    @Test func theRequestPortNeverMattersAndAnEntryWithAPortIsRefused() throws {
        let hosts = try excluded(["internal.example", "10.0.0.5"])
        for url in ["http://internal.example:8080/", "https://internal.example/", "http://10.0.0.5:3128/x"] {
            let host = try #require(URL(string: url)?.host())
            #expect(hosts.excludes(host: host), "\(url)")
        }
        for entry in ["internal.example:8080", "10.0.0.5:80", "[::1]:8080"] {
            let refusal = #expect(throws: ExcludedProxyHosts.Refusal.self) { try excluded([entry]) }
            #expect(refusal?.description == "the excluded proxy host \(entry.debugDescription) names a port: excluded hosts match a host on every port, so leave the port out")
        }
    }

    @Test func anAsteriskAloneOrAnywhereMeansEveryHost() throws {
        #expect(try excluded(["*"]).excludes(host: "anything.example"))
        #expect(try excluded(["*"]).excludes(host: "10.9.8.7"))
        let mixed = try excluded(["a.example", "*"])
        #expect(mixed.excludes(host: "b.example"))
        // curl reads `*` only alone: the list it gets says the same as Convey's reading.
        #expect(mixed.curlList == "*")
    }

    @Test func entriesCurlWouldNeverMatchAreRefusedWithTheFix() throws {
        let wildcard = #expect(throws: ExcludedProxyHosts.Refusal.self) { try excluded(["*.example.com"]) }
        #expect(wildcard?.reason.contains("write .example.com") == true)
        for entry in ["10.0.0.0/33", "fd00::/129", "fd00::/12", "10.0.0.0/0", "example.com/8", "bad host", "10.0.0.0/x"] {
            #expect(throws: ExcludedProxyHosts.Refusal.self, "\(entry)") { try excluded([entry]) }
        }
    }

    @Test func blanksAreSkippedAndTheCurlListIsNormalized() throws {
        let hosts = try excluded([" .Example.COM ", "", "10.0.0.0/8", "192.168.0.1"])
        #expect(hosts.curlList == "example.com,10.0.0.0/8,192.168.0.1")
        #expect(try excluded([]).curlList == "")
        #expect(!(try excluded([])).excludes(host: "example.com"))
    }

    @Test func aProxyWithARefusedEntryIsUnusableForEveryTransport() throws {
        let proxy = ProxyConfiguration.http(host: "proxy.example", port: 3128, excludedHosts: ["*.internal"])
        #expect(proxy.unusableReason?.contains("*.internal") == true)
        #expect(ProxyConfiguration.http(host: "proxy.example", port: 3128, excludedHosts: [".internal"]).unusableReason == nil)
        #expect(ProxyConfiguration.direct.unusableReason == nil)
    }
}
