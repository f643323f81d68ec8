import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

extension ConveyTransport {
    /// Sends a request built from a URL, a method, headers and a body.
    func send(_ url: URL, method: String = "GET", headers: [String: String] = [:], body: Data? = nil,
              bodyFile: URL? = nil, timeout: Duration = .seconds(20),
              progress: (@Sendable (TransferProgress) -> Void)? = nil) async throws -> TransportResponse {
        var request = OutgoingRequest(method: HTTPMethod(rawValue: method), url: url, body: body)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try await send(TransportRequest(request: request, bodyFile: bodyFile, timeout: timeout, progress: progress))
    }
}
