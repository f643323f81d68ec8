/// What runs and transports record measurements with, one per server with metrics on
/// (`MetricsConfiguration.recorder`), called with plain values on the run's hot path. With the
/// built-in `OTLPExporter`, measurements go straight into its aggregator (one lock, no
/// allocation for a series that exists); any other exporter receives each `MetricMeasurement`.
final class MetricsRecorder: Sendable {
    private let exporter: any MetricsExporter
    /// The built-in exporter's metrics, when that is the exporter.
    private let builtIn: OTLPMetricsExport?

    /// Whether measurements go into the built-in exporter's aggregator, which runs no app code.
    var aggregatesItself: Bool { builtIn != nil }

    init(exporter: any MetricsExporter) {
        self.exporter = exporter
        builtIn = (exporter as? OTLPExporter)?.metrics
    }

    /// A request goes on the wire (each attempt, each redirect hop): `http.client.active_requests`
    /// goes up by one for its method, host, port and scheme. Call `requestEnded` once for it.
    func requestStarted(_ request: MetricAttributes) {
        let active = request.activeRequest
        if let builtIn {
            builtIn.measured(builtIn.aggregator.addActiveRequests(active, 1))
        } else {
            exporter.record(MetricMeasurement(.activeRequests, value: 1, attributes: active))
        }
    }

    /// A request ended: with its response's head and body (the status and protocol added to its
    /// attributes with `MetricAttributes.add(status:protocolVersion:)`), or with an error (added
    /// with `MetricAttributes.add(_:)`). Records `http.client.request.duration` (`duration`: from
    /// the request's start to its end), the bodies' sizes when known, and takes the request off
    /// `http.client.active_requests`. `exemplar`: the trace and client span of the request, when
    /// it was made in a sampled trace.
    func requestEnded(_ request: MetricAttributes, duration: Duration, requestBodySize: Int?, responseBodySize: Int?,
                      exemplar: MetricExemplar?) {
        let seconds = Self.seconds(duration)
        let active = request.activeRequest
        if let builtIn {
            let first = builtIn.aggregator.recordRequest(request, seconds: seconds, requestBodySize: requestBodySize,
                                                         responseBodySize: responseBodySize, exemplar: exemplar)
            builtIn.measured(builtIn.aggregator.addActiveRequests(active, -1) || first)
            return
        }
        exporter.record(MetricMeasurement(.requestDuration, value: seconds, attributes: request, exemplar: exemplar))
        if let requestBodySize {
            exporter.record(MetricMeasurement(.requestBodySize, value: Double(requestBodySize), attributes: request, exemplar: exemplar))
        }
        if let responseBodySize {
            exporter.record(MetricMeasurement(.responseBodySize, value: Double(responseBodySize), attributes: request, exemplar: exemplar))
        }
        exporter.record(MetricMeasurement(.activeRequests, value: -1, attributes: active))
    }

    /// A run of a server with a cache: `convey.cache.requests` by what the cache did
    /// (`attributes.cacheStatus`, with the run's method, host, port and scheme). A run the cache
    /// answers puts no request on the wire and records nothing else.
    func cacheRequest(_ attributes: MetricAttributes) {
        if let builtIn {
            builtIn.measured(builtIn.aggregator.countCacheRequests(attributes))
        } else {
            exporter.record(MetricMeasurement(.cacheRequests, value: 1, attributes: attributes))
        }
    }

    /// A connection opened (`attributes`: its host, port, scheme and protocol version) in `state`.
    func connectionOpened(_ attributes: MetricAttributes, state: MetricAttributes.ConnectionState) {
        addOpenConnection(attributes, state: state, 1)
    }

    /// An open connection went from one state to the other (active while a request uses it, idle in the pool).
    func connectionChanged(_ attributes: MetricAttributes, from old: MetricAttributes.ConnectionState, to new: MetricAttributes.ConnectionState) {
        guard old != new else { return }
        addOpenConnection(attributes, state: old, -1)
        addOpenConnection(attributes, state: new, 1)
    }

    /// A connection in `state` closed after being open for `duration`: `http.client.connection.duration`.
    func connectionClosed(_ attributes: MetricAttributes, state: MetricAttributes.ConnectionState, duration: Duration) {
        addOpenConnection(attributes, state: state, -1)
        let connection = attributes.connection
        let seconds = Self.seconds(duration)
        if let builtIn {
            builtIn.measured(builtIn.aggregator.recordConnectionDuration(connection, seconds: seconds))
        } else {
            exporter.record(MetricMeasurement(.connectionDuration, value: seconds, attributes: connection))
        }
    }

    private func addOpenConnection(_ attributes: MetricAttributes, state: MetricAttributes.ConnectionState, _ delta: Int64) {
        var connection = attributes.connection
        connection.connectionState = state
        if let builtIn {
            builtIn.measured(builtIn.aggregator.addOpenConnections(connection, delta))
        } else {
            exporter.record(MetricMeasurement(.openConnections, value: Double(delta), attributes: connection))
        }
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
