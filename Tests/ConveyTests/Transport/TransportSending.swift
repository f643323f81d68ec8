import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Convey

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
