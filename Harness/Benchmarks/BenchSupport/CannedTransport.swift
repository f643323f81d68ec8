@_spi(Transport) import Convey

/// Answers every request at once with one response: Convey's pipeline with nothing under it.
@_spi(Transport) public struct CannedTransport: ConveyTransport {
    let response: TransportResponse

    /// A transport that answers every request with `response`.
    public init(response: TransportResponse) {
        self.response = response
    }

    /// It answers at once: there is never an exchange in flight for a run's stop to end, so it
    /// runs in the run's own task, as the built-in transports do.
    public var registersExchangeCancellation: Bool { true }
    public nonisolated(nonsending) func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        try await sink.deliver(response)
        return response.metrics
    }
}
