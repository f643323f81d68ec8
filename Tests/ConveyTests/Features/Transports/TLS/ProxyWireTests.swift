import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Explicit proxies against the project's own (scripts/proxy-server.py), which counts tunnels
/// and forwards per user name: each test uses a user name of its own.
@Suite("Proxies on the wire", .wire)
struct ProxyWireTests {
    private func user() -> String { "user-\(UUID().uuidString)" }

    #if os(Linux) && canImport(CConveyCurlShim)
    private func transport(_ proxy: ProxyConfiguration, tls: TLSConfiguration = TLSConfiguration()) -> CurlTransport {
        CurlTransport(configuration: .init(tls: tls, proxy: proxy))
    }

    @Test func httpsGoesThroughACONNECTTunnel() async throws {
        let user = user()
        let proxy = try TLSTestServers.proxy("CONVEY_HTTP_PROXY_URL", user: user)
        let response = try await transport(.through(proxy), tls: try TLSTestServers.trustingTheCA()).send(try TLSTestServers.trusted("/hello.txt"))
        #expect(response.head.statusCode == 200)
        #expect(try await TLSTestServers.proxyCounts(user: user) == ["tunnels": 1, "forwards": 0, "socks": 0, "refused": 0])
    }

    @Test func plainHTTPIsForwarded() async throws {
        let user = user()
        let proxy = try TLSTestServers.proxy("CONVEY_HTTP_PROXY_URL", user: user)
        let response = try await transport(.through(proxy)).send(try TestServers.nginx("/hello.txt"))
        #expect(String(decoding: response.data, as: UTF8.self) == "Hello from nginx\n")
        #expect(try await TLSTestServers.proxyCounts(user: user)["forwards"] == 1)
    }

    @Test func socks5CarriesTheRequest() async throws {
        let user = user()
        let proxy = try TLSTestServers.proxy("CONVEY_SOCKS_PROXY_URL", user: user)
        let response = try await transport(.through(proxy), tls: try TLSTestServers.trustingTheCA()).send(try TLSTestServers.trusted("/hello.txt"))
        #expect(response.head.statusCode == 200)
        #expect(try await TLSTestServers.proxyCounts(user: user) == ["tunnels": 0, "forwards": 0, "socks": 1, "refused": 0])
    }

    @Test func aWrongProxyPasswordFailsTheTunnelWithoutPrintingIt() async throws {
        let user = user()
        let proxy = try TLSTestServers.proxy("CONVEY_HTTP_PROXY_URL", user: user, password: "wrong-proxy-password")
        let error = await #expect(throws: URLError.self) {
            try await transport(.through(proxy), tls: try TLSTestServers.trustingTheCA()).send(try TLSTestServers.trusted("/hello.txt"))
        }
        #expect(error?.localizedDescription.contains("407") == true)
        #expect(error?.localizedDescription.contains("wrong-proxy-password") == false)
        #expect(try await TLSTestServers.proxyCounts(user: user)["refused"] == 1)
    }

    @Test func excludedHostsAreReachedDirectly() async throws {
        let user = user()
        let proxy = try TLSTestServers.proxy("CONVEY_HTTP_PROXY_URL", user: user, excludedHosts: ["127.0.0.1"])
        let response = try await transport(.through(proxy)).send(try TestServers.nginx("/hello.txt"))
        #expect(response.head.statusCode == 200)
        #expect(try await TLSTestServers.proxyCounts(user: user) == ["tunnels": 0, "forwards": 0, "socks": 0, "refused": 0])
    }

    /// The environment is the default (on the run's transport, URLSession's too), and
    /// `--noproxy '*'` (`.direct`, curl only: URLSession cannot ignore it) ignores it: in a child
    /// process, since the environment is the whole process's.
    @Test func theEnvironmentsProxyIsUsedByDefaultAndIgnoredWhenAsked() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let base = try #require(ProcessInfo.processInfo.environment["CONVEY_HTTP_PROXY_URL"])
        let proxyWithCredentials = base.replacingOccurrences(of: "http://", with: "http://env-user:\(TLSTestServers.proxyPassword)@")
        let environment = ["http_proxy": proxyWithCredentials, "no_proxy": "", "NO_PROXY": ""]
        let viaEnvironment = UUID().uuidString
        let direct = UUID().uuidString
        let nginx = try TestServers.nginx("").absoluteString
        let used = try await HarnessProcess.run(["get", "\(nginx)/hello.txt?\(viaEnvironment)"], records: records.url, environment: environment)
        let ignored = try await HarnessProcess.run(["get", "\(nginx)/hello.txt?\(direct)", "--noproxy", "*", "--transport", "curl"],
                                                   records: records.url, environment: environment)
        #expect(used.status == 0, "\(used.stderr)")
        #expect(ignored.status == 0, "\(ignored.stderr)")
        #expect(try await TLSTestServers.proxiedRequests(containing: viaEnvironment) == 1)
        #expect(try await TLSTestServers.proxiedRequests(containing: direct) == 0)
    }
    #endif
}
