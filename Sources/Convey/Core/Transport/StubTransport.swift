import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport that answers from a closure, with no network: for unit tests, previews and demos.
///
/// ```swift
/// server.transport = StubTransport { request in
///     TransportResponse(url: request.request.url, statusCode: 200, body: Data("{}".utf8))
/// }
/// ```
@_spi(Transport) public struct StubTransport: ConveyTransport {
    /// Produces the response for a request, or throws to simulate a failure.
    @_spi(Transport) public typealias Handler = @Sendable (TransportRequest) async throws -> TransportResponse

    private let handler: Handler

    /// Creates a stub that answers every request with `handler`.
    public init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    public func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        let response = try await answer(request)
        try await sink.deliver(response)
        return response.metrics
    }

    private func answer(_ request: TransportRequest) async throws -> TransportResponse {
        try Task.checkCancellation()
        return try await handler(request)
    }
}
