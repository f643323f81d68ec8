import Foundation

/// A finished span of a traced run, as a `SpanExporter` receives it: OpenTelemetry's span model
/// with the names of its HTTP client semantic conventions (Docs/tracing.md lists every attribute).
///
/// A run makes one span of its own (`isClient` false: the whole run, named after the task's
/// type, with the final status and `convey.cache.status`) and a client span for each request on
/// the wire (`isClient` true: each attempt and each redirect hop, named after the method). A run
/// the cache answers has no client span.
public struct TraceSpan: Sendable {
    let trace: TraceID
    let span: UInt64
    let parent: UInt64?

    /// The span's name: the method for a request on the wire, the task's type for a run.
    public let name: String
    /// Whether the span is one request on the wire (OpenTelemetry's `CLIENT` kind); otherwise it
    /// covers a whole run (`INTERNAL`).
    public let isClient: Bool
    /// When the span started and ended.
    public let start: Date
    public let end: Date
    /// The attributes with text values (`http.request.method`, `url.full`, `error.type`, …).
    public let attributes: [String: String]
    /// The attributes with integer values (`http.response.status_code`, `server.port`,
    /// `http.request.resend_count`).
    public let integerAttributes: [String: Int]
    /// What happened during the span, in order: the timings the transport measured
    /// (`convey.dns_done`, `convey.connected`, `convey.tls_done`, `convey.first_byte`, `convey.transfer_done`).
    public let events: [(name: String, date: Date)]
    /// Whether the span ended in error: a status of 400 or more, or a thrown error (cancellation
    /// included, with `error.type` `cancelled`).
    public let isError: Bool
    /// Why, for a span in error: the error's description with credentials masked, or `nil`.
    public let statusMessage: String?
    /// The trace's `tracestate`, passed through unchanged.
    public let traceState: String?

    init(trace: TraceID, span: UInt64, parent: UInt64?, name: String, isClient: Bool, start: Date, end: Date,
         attributes: [String: String], integerAttributes: [String: Int], events: [(name: String, date: Date)] = [],
         isError: Bool, statusMessage: String?, traceState: String?) {
        self.trace = trace
        self.span = span
        self.parent = parent
        self.name = name
        self.isClient = isClient
        self.start = start
        self.end = end
        self.attributes = attributes
        self.integerAttributes = integerAttributes
        self.events = events
        self.isError = isError
        self.statusMessage = statusMessage
        self.traceState = traceState
    }

    /// The trace id: 32 lowercase hex digits.
    public var traceID: String { trace.hex }
    /// The span's id: 16 lowercase hex digits.
    public var spanID: String { TraceHex.string(span) }
    /// The parent span's id, or `nil` for the root of a new trace.
    public var parentSpanID: String? { parent.map(TraceHex.string) }
}
