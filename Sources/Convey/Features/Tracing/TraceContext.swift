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
    /// The `tracestate` field, passed on unchanged; `nil` when there is none or it was not valid.
    public let traceState: String?

    /// The context of the current task: the one an app set with `$current.withValue`, or inside a
    /// traced run, the run's span. `nil`: runs begin new traces.
    @TaskLocal public static var current: TraceContext?

    /// The context `traceparent` and `tracestate` describe, or `nil` when `traceparent` is missing
    /// or invalid as W3C Trace Context level 1 defines it: a length other than 55 characters for
    /// version `00`, anything but lowercase hex digits where ids, version and flags go, an all-zero
    /// trace id or parent id, or version `ff`. A later version is read as the specification says
    /// (its first 55 characters, then `-` or the end). An invalid context is never sent on: a run
    /// given none begins a new trace, which replaces it. `tracestate` is kept as it is when W3C
    /// Trace Context allows it (at most 32 list members, each key and value as its grammar says, no
    /// key twice, at most 512 characters), and dropped whole otherwise, or when `traceparent` is invalid.
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

    /// `tracestate` as it is when W3C Trace Context allows passing it on, `nil` otherwise: at most
    /// 512 characters (what the specification asks every vendor to pass on), at most 32 list
    /// members, each `key=value` with a key and a value the specification's grammar allows, and
    /// no key twice. Empty members and spaces or tabs around members are allowed, as the
    /// specification says. Anything else drops the whole field: a hostile value is never sent on.
    static func validTraceState(_ text: String?) -> String? {
        guard let text, !text.isEmpty, text.utf8.count <= TraceState.maximumLength else { return nil }
        return TraceState.isValid(Array(text.utf8)) ? text : nil
    }
}

/// The `tracestate` grammar of W3C Trace Context (level 1, §3.3.1):
///
/// ```
/// list             = list-member 0*31( OWS "," OWS list-member )
/// list-member      = key "=" value / OWS
/// key              = simple-key / multi-tenant-key
/// simple-key       = lcalpha 0*255( lcalpha / DIGIT / "_" / "-" / "*" / "/" )
/// multi-tenant-key = tenant-id "@" system-id
/// tenant-id        = ( lcalpha / DIGIT ) 0*240( lcalpha / DIGIT / "_" / "-" / "*" / "/" )
/// system-id        = lcalpha 0*13( lcalpha / DIGIT / "_" / "-" / "*" / "/" )
/// value            = 0*255( chr ) nblk-chr
/// nblk-chr         = %x21-2B / %x2D-3C / %x3E-7E
/// chr              = %x20 / nblk-chr
/// ```
enum TraceState {
    /// The most list members a `tracestate` may have.
    static let maximumMembers = 32
    /// The longest `tracestate` Convey passes on: the length the specification asks every vendor to propagate.
    static let maximumLength = 512

    /// Whether `bytes` is a `tracestate` the grammar allows, with at most 32 members and no key twice.
    static func isValid(_ bytes: [UInt8]) -> Bool {
        var keys: [ArraySlice<UInt8>] = []
        var hasMember = false
        for member in bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let trimmed = trimmingWhitespace(member)
            if trimmed.isEmpty { continue }
            guard keys.count < maximumMembers, let equals = trimmed.firstIndex(of: UInt8(ascii: "=")) else { return false }
            let key = trimmed[..<equals]
            guard isKey(key), isValue(trimmed[(equals + 1)...]), !keys.contains(where: { $0.elementsEqual(key) }) else { return false }
            keys.append(key)
            hasMember = true
        }
        return hasMember
    }

    /// `member` without the spaces and tabs (OWS) around it.
    private static func trimmingWhitespace(_ member: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        guard let first = member.firstIndex(where: { !isWhitespace($0) }), let last = member.lastIndex(where: { !isWhitespace($0) }) else {
            return member[member.startIndex..<member.startIndex]
        }
        return member[first...last]
    }

    /// A simple key, or a multi-tenant key (`tenant@system`).
    private static func isKey(_ key: ArraySlice<UInt8>) -> Bool {
        guard let at = key.firstIndex(of: UInt8(ascii: "@")) else {
            return isIdentifier(key, maximumLength: 256, firstMayBeDigit: false)
        }
        return isIdentifier(key[..<at], maximumLength: 241, firstMayBeDigit: true)
            && isIdentifier(key[(at + 1)...], maximumLength: 14, firstMayBeDigit: false)
    }

    /// A lowercase letter (or a digit, when allowed) then lowercase letters, digits, `_`, `-`, `*` and `/`.
    private static func isIdentifier(_ text: ArraySlice<UInt8>, maximumLength: Int, firstMayBeDigit: Bool) -> Bool {
        guard let first = text.first, text.count <= maximumLength else { return false }
        func isLowercase(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard isLowercase(first) || (firstMayBeDigit && isDigit(first)) else { return false }
        return text.dropFirst().allSatisfy { byte in
            isLowercase(byte) || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "*") || byte == UInt8(ascii: "/")
        }
    }

    /// 1 to 256 printable ASCII characters but `,` and `=`, the last not a space.
    private static func isValue(_ value: ArraySlice<UInt8>) -> Bool {
        guard let last = value.last, value.count <= 256, last != 0x20 else { return false }
        return value.allSatisfy { (0x20...0x7E).contains($0) && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "=") }
    }
}
