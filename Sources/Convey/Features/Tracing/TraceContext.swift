import Foundation

/// A position in a distributed trace, as W3C Trace Context (level 1) carries it between services
/// in the `traceparent` and `tracestate` header fields: the trace, the span that the next calls are
/// children of, whether the trace is sampled, and the vendors' own state.
///
/// Runs of a server with `ServerConfiguration.tracing` read `TraceContext.current` when they
/// start: a run started inside a context continues its trace, one started outside any begins a
/// new trace. A service that received a request continues the caller's trace in one line:
///
/// ```swift
/// try await TraceContext.$current.withValue(TraceContext(traceparent: request.headers["traceparent"],
///                                                        tracestate: request.headers["tracestate"])) {
///     try await FetchInventory(item: id).download()   // a child of the caller's span
/// }
/// ```
///
/// While a run of a traced server is under way, `current` is the run's own span, so that runs
/// its hooks start (a credential refresh) are its children.
public struct TraceContext: Sendable, Hashable, CustomStringConvertible {
    let trace: TraceID
    let span: UInt64
    /// Whether the trace is sampled (W3C's `sampled` flag): spans of an unsampled trace are not
    /// exported, and its context is still propagated with the flag off.
    public let isSampled: Bool
    /// The `tracestate` field, passed on unchanged; `nil` when there is none.
    public let traceState: String?

    /// The context of the current task: the one an app set with `$current.withValue`, or inside a
    /// traced run, the run's span. `nil`: runs begin new traces.
    @TaskLocal public static var current: TraceContext?

    /// The context `traceparent` and `tracestate` describe, or `nil` when `traceparent` is missing
    /// or invalid as W3C Trace Context level 1 defines it: a length other than 55 characters for
    /// version `00`, anything but lowercase hex digits where ids, version and flags go, an all-zero
    /// trace id or parent id, or version `ff`. A later version is read as the specification says
    /// (its first 55 characters, then `-` or the end). An invalid context is never sent on: a run
    /// given none begins a new trace, which replaces it. `tracestate` is kept as it is when it is
    /// at most 512 characters of printable ASCII, and dropped otherwise, or when `traceparent` is
    /// invalid.
    public init?(traceparent: String?, tracestate: String? = nil) {
        guard let traceparent, let parsed = Self.parse(traceparent) else { return nil }
        self.init(trace: parsed.trace, span: parsed.span, isSampled: parsed.sampled, traceState: Self.validTraceState(tracestate))
    }

    init(trace: TraceID, span: UInt64, isSampled: Bool, traceState: String?) {
        self.trace = trace
        self.span = span
        self.isSampled = isSampled
        self.traceState = traceState
    }

    /// The trace id: 32 lowercase hex digits.
    public var traceID: String { trace.hex }
    /// The id of the span the next calls are children of: 16 lowercase hex digits.
    public var spanID: String { TraceHex.string(span) }

    /// The `traceparent` value of this context, version `00`: `00-<trace id>-<span id>-<01 or 00>`.
    public var traceparent: String { Self.traceparent(trace: trace, span: span, sampled: isSampled) }

    /// The `traceparent` value.
    public var description: String { traceparent }

    /// `00-<trace>-<span>-<flags>`, written in one allocation.
    static func traceparent(trace: TraceID, span: UInt64, sampled: Bool) -> String {
        String(unsafeUninitializedCapacity: 55) { buffer in
            buffer[0] = UInt8(ascii: "0")
            buffer[1] = UInt8(ascii: "0")
            buffer[2] = UInt8(ascii: "-")
            TraceHex.write(trace.high, into: buffer, at: 3)
            TraceHex.write(trace.low, into: buffer, at: 19)
            buffer[35] = UInt8(ascii: "-")
            TraceHex.write(span, into: buffer, at: 36)
            buffer[52] = UInt8(ascii: "-")
            buffer[53] = UInt8(ascii: "0")
            buffer[54] = sampled ? UInt8(ascii: "1") : UInt8(ascii: "0")
            return 55
        }
    }

    /// The trace, parent span and sampled flag of a `traceparent` value, or `nil` when invalid.
    private static func parse(_ text: String) -> (trace: TraceID, span: UInt64, sampled: Bool)? {
        let value = text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        let bytes = Array(value.utf8)
        guard bytes.count >= 55 else { return nil }
        guard let version = hexByte(bytes[0], bytes[1]), version != 0xFF,
              bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"), bytes[52] == UInt8(ascii: "-"),
              let flags = hexByte(bytes[53], bytes[54]) else { return nil }
        // Version 00 is exactly 55 characters; a later one may go on after a `-`.
        if version == 0 {
            guard bytes.count == 55 else { return nil }
        } else if bytes.count > 55, bytes[55] != UInt8(ascii: "-") {
            return nil
        }
        guard let high = TraceHex.value(bytes[3..<19]), let low = TraceHex.value(bytes[19..<35]),
              let span = TraceHex.value(bytes[36..<52]) else { return nil }
        let trace = TraceID(high: high, low: low)
        guard trace.isValid, span != 0 else { return nil }
        return (trace, span, flags & 1 == 1)
    }

    /// Two lowercase hex digits as a byte.
    private static func hexByte(_ first: UInt8, _ second: UInt8) -> UInt8? {
        func digit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        guard let high = digit(first), let low = digit(second) else { return nil }
        return high << 4 | low
    }

    /// `tracestate` as it is when it can be passed on: 1 to 512 characters of printable ASCII.
    private static func validTraceState(_ text: String?) -> String? {
        guard let text, !text.isEmpty, text.utf8.count <= 512,
              text.utf8.allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x09 }),
              text.utf8.contains(where: { $0 != 0x20 && $0 != 0x09 }) else { return nil }
        return text
    }
}
