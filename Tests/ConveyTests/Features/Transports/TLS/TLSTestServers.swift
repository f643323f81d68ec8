import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The TLS servers, test CA and proxies `scripts/with-test-servers` starts (see its header).
enum TLSTestServers {
    private static let environment = ProcessInfo.processInfo.environment

    /// A URL on one of the TLS servers: `CONVEY_TLS_CA_URL`, `CONVEY_TLS_EXPIRED_URL`, …
    static func url(_ variable: String, _ path: String) throws -> URL {
        let base = try #require(environment[variable], "\(variable) is not set: run the suite with scripts/test")
        return try #require(URL(string: base + path))
    }

    /// The nginx server with a certificate from the test CA (HTTP/2, TLS 1.2 and 1.3).
    static func trusted(_ path: String) throws -> URL { try url("CONVEY_TLS_CA_URL", path) }

    /// A file the test CA made: `ca.crt`, `client.crt`, `client.p12`, …
    static func file(_ name: String) throws -> URL {
        let folder = try #require(environment["CONVEY_TLS_DIR"], "CONVEY_TLS_DIR is not set: run the suite with scripts/test")
        return URL(filePath: folder).appending(path: name)
    }

    /// A text file the test CA made, without its line break: a pin or the client passphrase.
    static func text(_ name: String) throws -> String {
        try String(contentsOf: try file(name), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The server's public-key pin, and another key's.
    static func serverPin() throws -> String { try #require(PublicKeyPin(try text("server.pin"))).description }
    static func otherPin() throws -> String { try #require(PublicKeyPin(try text("other.pin"))).description }

    /// Trusting only the test CA.
    static func trustingTheCA(_ change: (inout TLSConfiguration) throws -> Void = { _ in }) throws -> TLSConfiguration {
        var tls = TLSConfiguration(trustRoots: .only(certificatesFile: try file("ca.crt")))
        try change(&tls)
        return tls
    }

    static let proxyPassword = environment["CONVEY_PROXY_PASSWORD"] ?? ""

    /// The test proxy, HTTP or SOCKS5, with a user name of the test's own so that its counts are its own.
    static func proxy(_ variable: String, user: String, password: String = proxyPassword, excludedHosts: [String] = []) throws -> Proxy {
        let text = try #require(environment[variable], "\(variable) is not set: run the suite with scripts/test")
        var proxy = try #require(Proxy(url: text, excludedHosts: excludedHosts))
        proxy.username = user
        proxy.password = password
        return proxy
    }

    /// What the test HTTP proxy counted for a user name: tunnels, forwards, socks, refused.
    static func proxyCounts(user: String) async throws -> [String: Int] {
        let url = try url("CONVEY_HTTP_PROXY_URL", "/stats?user=\(user)")
        let response = try await URLSessionTransport(proxy: .environment).send(url)
        return try JSONDecoder().decode([String: Int].self, from: response.data)
    }

    /// How many proxied requests and tunnels had `text` in their target.
    static func proxiedRequests(containing text: String) async throws -> Int {
        let url = try url("CONVEY_HTTP_PROXY_URL", "/stats?target=\(text)")
        let response = try await URLSessionTransport().send(url)
        return try #require(try JSONDecoder().decode([String: Int].self, from: response.data)["matching"])
    }
}

extension TransportFailure {
    /// The values of the transport failure a `ConveyError` is, or `nil`.
    static func of(_ error: (any Error)?) -> (kind: TransportFailure, url: URL?, code: Int, reason: String)? {
        (error as? ConveyError)?.transportFailure
    }
}
