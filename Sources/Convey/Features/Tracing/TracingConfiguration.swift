import Foundation

/// Distributed tracing for a server's runs (`ServerConfiguration.tracing`; off while `nil`, the
/// default): W3C trace context on every request on the wire to the origins allowed here, and
/// OpenTelemetry spans to an exporter. See Docs/tracing.md.
///
/// ```swift
/// configuration.tracing = TracingConfiguration(exporter: OTLPExporter(collector: URL(string: "http://127.0.0.1:4318")!),
///                                 propagatingTo: [URL(string: "https://auth.example.com")!])
/// ```
///
/// Each attempt and redirect hop to an allowed origin carries `traceparent` (and the trace's
/// `tracestate`, unchanged); a request to any other origin carries neither, even when the task
/// set them itself: with tracing on, Convey owns both fields.
public struct TracingConfiguration: Sendable {
    /// Where finished spans go; `nil`: the trace context is propagated and no span is made.
    public var exporter: (any SpanExporter)?
    /// Whether requests to the origin of the server's remote carry trace headers. Default: `true`.
    public var propagatesToRemote: Bool
    /// Other origins whose requests carry trace headers (each URL's scheme, host and port count;
    /// its path does not). Default: none, so that a redirect to a third party gets no trace headers.
    public var propagationOrigins: [URL] {
        didSet { origins = propagationOrigins.compactMap(TraceOrigin.init(url:)) }
    }
    /// `propagationOrigins` as compared with each request.
    private(set) var origins: [TraceOrigin]
    /// The share of new traces that are sampled, from 0 to 1 (OpenTelemetry's parent-based sampler
    /// with a trace-id ratio for new traces): a run inside a context follows the context's sampled
    /// flag whatever the ratio; a run that begins a trace is sampled when its trace id falls in the
    /// ratio, as `TraceIdRatioBased` decides. An unsampled run still sends its trace context on,
    /// with the flag off, and makes no span. Default: 1, every new trace.
    public var sampleRatio: Double {
        didSet { sampler = TraceSampler(ratio: sampleRatio) }
    }
    /// `sampleRatio` as runs apply it.
    private(set) var sampler: TraceSampler

    /// Tracing with `exporter` (none: propagation only), headers sent to the remote's origin when
    /// `propagatesToRemote`, and to each of `origins`, `sampleRatio` of new traces sampled.
    public init(exporter: (any SpanExporter)? = nil, propagatingTo origins: [URL] = [], propagatesToRemote: Bool = true,
                sampleRatio: Double = 1) {
        self.exporter = exporter
        self.propagatesToRemote = propagatesToRemote
        propagationOrigins = origins
        self.origins = origins.compactMap(TraceOrigin.init(url:))
        self.sampleRatio = sampleRatio
        sampler = TraceSampler(ratio: sampleRatio)
    }
}

/// An origin as RFC 6454 compares them: scheme and host (case-insensitive) and port (the scheme's
/// default when none is written).
struct TraceOrigin: Sendable, Hashable {
    let scheme: String
    let host: String
    let port: Int

    init?(url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host(percentEncoded: false)?.lowercased(), !host.isEmpty else { return nil }
        guard let port = url.port ?? Self.defaultPort(scheme) else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// 80 for http, 443 for https.
    static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "http": 80
        case "https": 443
        default: nil
        }
    }
}
