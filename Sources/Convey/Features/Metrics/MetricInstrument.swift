/// The instruments Convey records: OpenTelemetry's HTTP client metrics, as the semantic
/// conventions name them, and Convey's count of cache lookups.
enum MetricInstrument: Int, CaseIterable, Sendable {
    /// `http.client.request.duration`: one measurement per request on the wire.
    case requestDuration
    /// `http.client.request.body.size`: the bytes of a request's body.
    case requestBodySize
    /// `http.client.response.body.size`: the bytes of a response's body.
    case responseBodySize
    /// `http.client.active_requests`: requests on the wire now.
    case activeRequests
    /// `http.client.open_connections`: connections open now, idle or active.
    case openConnections
    /// `http.client.connection.duration`: how long each connection was open.
    case connectionDuration
    /// `convey.cache.requests`: runs a server's cache answered or took part in, by outcome.
    case cacheRequests

    /// The instrument's name.
    var name: String {
        switch self {
        case .requestDuration: "http.client.request.duration"
        case .requestBodySize: "http.client.request.body.size"
        case .responseBodySize: "http.client.response.body.size"
        case .activeRequests: "http.client.active_requests"
        case .openConnections: "http.client.open_connections"
        case .connectionDuration: "http.client.connection.duration"
        case .cacheRequests: "convey.cache.requests"
        }
    }

    /// The unit, in UCUM as the conventions write it.
    var unit: String {
        switch self {
        case .requestDuration, .connectionDuration: "s"
        case .requestBodySize, .responseBodySize: "By"
        case .activeRequests, .cacheRequests: "{request}"
        case .openConnections: "{connection}"
        }
    }

    /// The conventions' description.
    var description: String {
        switch self {
        case .requestDuration: "Duration of HTTP client requests."
        case .requestBodySize: "Size of HTTP client request bodies."
        case .responseBodySize: "Size of HTTP client response bodies."
        case .activeRequests: "Number of active HTTP requests."
        case .openConnections: "Number of outbound HTTP connections that are currently active or idle on the client."
        case .connectionDuration: "The duration of the successfully established outbound HTTP connections."
        case .cacheRequests: "Runs that a server's HTTP cache answered or took part in, by outcome."
        }
    }

    /// The kind of instrument.
    var kind: MetricMeasurement.Kind {
        switch self {
        case .requestDuration, .requestBodySize, .responseBodySize, .connectionDuration: .histogram
        case .activeRequests, .openConnections: .upDownCounter
        case .cacheRequests: .counter
        }
    }

    /// A histogram's bucket boundaries: those the conventions advise for durations, and the
    /// SDK specification's default for sizes, for which the conventions advise none.
    var boundaries: [Double] {
        switch self {
        case .requestDuration: Self.requestDurationBoundaries
        case .connectionDuration: Self.connectionDurationBoundaries
        case .requestBodySize, .responseBodySize: Self.defaultBoundaries
        case .activeRequests, .openConnections, .cacheRequests: []
        }
    }

    /// `http.client.request.duration`'s advised boundaries, in seconds.
    static let requestDurationBoundaries: [Double] = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
    /// `http.client.connection.duration`'s advised boundaries, in seconds.
    static let connectionDurationBoundaries: [Double] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]
    /// The explicit bucket histogram's default boundaries (OpenTelemetry's metrics SDK specification).
    static let defaultBoundaries: [Double] = [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000]
}
