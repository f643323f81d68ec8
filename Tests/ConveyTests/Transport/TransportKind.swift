import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Convey

/// The real transports, for suites that must pass on each of them.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case urlSession
    #if canImport(CConveyCurlShim)
    case curl
    #endif

    var testDescription: String { rawValue }

    func make() -> any ConveyTransport {
        switch self {
        case .urlSession: URLSessionTransport()
        #if canImport(CConveyCurlShim)
        case .curl: CurlTransport()
        #endif
        }
    }
}

/// Collects progress reports from any thread.
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [TransferProgress] = []

    func add(_ progress: TransferProgress) { lock.withLock { items.append(progress) } }

    var reports: [TransferProgress] { lock.withLock { items } }
}

extension ConveyTransport {
    /// Sends a request built from a URL, a method, headers and a body.
    func send(_ url: URL, method: String = "GET", headers: [String: String] = [:], body: Data? = nil,
              bodyFile: URL? = nil, timeout: Duration = .seconds(20),
              progress: (@Sendable (TransferProgress) -> Void)? = nil) async throws -> TransportResponse {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        return try await send(TransportRequest(urlRequest: request, bodyFile: bodyFile, timeout: timeout, progress: progress))
    }
}

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
