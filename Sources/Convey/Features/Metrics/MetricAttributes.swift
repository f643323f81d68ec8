import Foundation

/// The attributes of one measurement, as the HTTP client semantic conventions name them: a small
/// fixed set of fields, hashed as the key of the series it adds to, so that recording builds no
/// dictionary. Never a URL, a path, a query or a header: the number of series stays small, and
/// nothing secret can be in one.
struct MetricAttributes: Hashable, Sendable {
    /// `http.request.method`: a method the conventions know, or `_OTHER`.
    var method: String?
    /// `server.address`: the host, without the brackets of an IPv6 address.
    var serverAddress: String?
    /// `server.port`: the port, or the scheme's default.
    var serverPort: Int?
    /// `url.scheme`: `http` or `https`.
    var scheme: String?
    /// `http.response.status_code`.
    var statusCode: Int?
    /// `error.type`: the status from 400 on, the `ConveyError` case of a failure without a
    /// response (`attemptTimedOut`, `transport`, `cancelled`), the type's name for an app's own error.
    var errorType: String?
    /// `network.protocol.version`: `1.1`, `2`.
    var protocolVersion: String?
    /// `http.connection.state`: `active` or `idle`.
    var connectionState: ConnectionState?
    /// `convey.cache.status`: what the cache did for a run (`hit`, `network`, `revalidated`, …).
    var cacheStatus: CacheStatus?
    /// `otel.metric.overflow`: the series every measurement goes to once a stream has as many
    /// series as it may (the SDK specification's cardinality limit).
    var isOverflow = false

    /// A connection's state, as `http.connection.state` names it.
    enum ConnectionState: String, Sendable {
        case active, idle
    }

    /// The series of an instrument's overflow: `otel.metric.overflow=true` and nothing else.
    static let overflow = MetricAttributes(isOverflow: true)

    /// The attributes of a request with `method` to `url`: method, host, port and scheme.
    init(method: HTTPMethod, url: URL) {
        let name = method.rawValue
        self.method = SpanAttributes.knownMethods.contains(name) ? name : "_OTHER"
        let scheme = url.scheme?.lowercased()
        self.scheme = scheme
        if var host = url.host(percentEncoded: false) {
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            serverAddress = host
        }
        serverPort = url.port ?? scheme.flatMap(TraceOrigin.defaultPort)
    }

    /// Attributes given field by field.
    init(method: String? = nil, serverAddress: String? = nil, serverPort: Int? = nil, scheme: String? = nil, statusCode: Int? = nil,
         errorType: String? = nil, protocolVersion: String? = nil, connectionState: ConnectionState? = nil, cacheStatus: CacheStatus? = nil,
         isOverflow: Bool = false) {
        self.method = method
        self.serverAddress = serverAddress
        self.serverPort = serverPort
        self.scheme = scheme
        self.statusCode = statusCode
        self.errorType = errorType
        self.protocolVersion = protocolVersion
        self.connectionState = connectionState
        self.cacheStatus = cacheStatus
        self.isOverflow = isOverflow
    }

    /// Adds a response's status (`error.type` too from 400 on) and the protocol it came in
    /// (`HTTP/1.1` or `1.1`, as a status line or `ExchangeMetrics.httpVersion` spells it).
    mutating func add(status: Int, protocolVersion: String? = nil) {
        statusCode = status
        errorType = status >= 400 ? String(status) : nil
        if let protocolVersion {
            self.protocolVersion = protocolVersion.hasPrefix("HTTP/") ? SpanAttributes.protocolVersion(protocolVersion) : protocolVersion
        }
    }

    /// Adds a failure: an `HTTPError` gives its status, any other error its `error.type`.
    mutating func add(_ error: any Error) {
        if let http = error as? HTTPError {
            add(status: http.statusCode)
            return
        }
        errorType = SpanAttributes.errorType(error)
    }

    /// What `http.client.active_requests` keeps of a request's attributes: method, host, port, scheme.
    var activeRequest: MetricAttributes {
        MetricAttributes(method: method, serverAddress: serverAddress, serverPort: serverPort, scheme: scheme)
    }

    /// What the connection instruments keep: host, port, scheme and protocol version.
    var connection: MetricAttributes {
        MetricAttributes(serverAddress: serverAddress, serverPort: serverPort, scheme: scheme, protocolVersion: protocolVersion)
    }

    /// The attributes with text values, by their names in the conventions.
    var text: [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        if let method { pairs.append(("http.request.method", method)) }
        if let serverAddress { pairs.append(("server.address", serverAddress)) }
        if let scheme { pairs.append(("url.scheme", scheme)) }
        if let errorType { pairs.append(("error.type", errorType)) }
        if let protocolVersion { pairs.append(("network.protocol.version", protocolVersion)) }
        if let connectionState { pairs.append(("http.connection.state", connectionState.rawValue)) }
        if let cacheStatus { pairs.append(("convey.cache.status", cacheStatus.rawValue)) }
        return pairs
    }

    /// The attributes with integer values.
    var integers: [(name: String, value: Int)] {
        var pairs: [(name: String, value: Int)] = []
        if let serverPort { pairs.append(("server.port", serverPort)) }
        if let statusCode { pairs.append(("http.response.status_code", statusCode)) }
        return pairs
    }
}

/// The trace a measurement was made in, for a histogram's exemplar: the trace and the span of
/// the request measured (its client span), only when the trace is sampled.
struct MetricExemplar: Sendable, Hashable {
    let trace: TraceID
    let span: UInt64
}
