import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

extension TestServers {
    /// A URL on the local httpbin, from a path with its query.
    static func httpbin(_ pathAndQuery: String) throws -> URL {
        let base = try #require(httpbinURL, "CONVEY_HTTPBIN_URL is not set: run the suite with scripts/test")
        return try #require(URL(string: base.absoluteString + pathAndQuery))
    }

    /// A URL on the fault server, from a route with its query.
    static func fault(_ pathAndQuery: String) throws -> URL {
        let base = try #require(faultURL, "CONVEY_FAULT_URL is not set: run the suite with scripts/test")
        return try #require(URL(string: base.absoluteString + pathAndQuery))
    }

    /// A unique counter route on the fault server: hit it with `fault(counter)`, read it with `faultCount(counter)`.
    static func newFaultCounter() -> String { "/count/\(UUID().uuidString)" }

    /// How many requests the fault server counted on a counter route.
    static func faultCount(_ counter: String) async throws -> Int {
        let response = try await URLSessionTransport().send(try fault(counter + "?read"))
        return try #require(Int(String(decoding: response.data, as: UTF8.self)))
    }

    /// A URL on the local nginx.
    static func nginx(_ path: String) throws -> URL {
        let base = try #require(nginxURL, "CONVEY_NGINX_URL is not set: run the suite with scripts/test")
        return try #require(URL(string: base.absoluteString + path))
    }

    /// A URL on the local nginx's TLS server (HTTP/2, self-signed certificate).
    static func nginxTLS(_ path: String) throws -> URL {
        let base = try #require(ProcessInfo.processInfo.environment["CONVEY_NGINX_TLS_URL"],
                                "CONVEY_NGINX_TLS_URL is not set: run the suite with scripts/test")
        return try #require(URL(string: base + path))
    }

    /// The self-signed certificate of the TLS server.
    static func nginxTLSCertificate() throws -> URL {
        let path = try #require(ProcessInfo.processInfo.environment["CONVEY_NGINX_TLS_CERT"],
                                "CONVEY_NGINX_TLS_CERT is not set: run the suite with scripts/test")
        return URL(filePath: path)
    }
}
