import Foundation
import Testing
@testable import Convey

extension TestServers {
    /// A URL on the local httpbin, from a path with its query.
    static func httpbin(_ pathAndQuery: String) throws -> URL {
        let base = try #require(httpbinURL, "CONVEY_HTTPBIN_URL is not set: run the suite with scripts/test")
        return try #require(URL(string: base.absoluteString + pathAndQuery))
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
