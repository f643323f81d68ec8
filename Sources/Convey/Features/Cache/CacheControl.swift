/// The directives of a `Cache-Control` field (RFC 9111 §5.2) that a private client cache acts on,
/// with RFC 5861's `stale-while-revalidate` and `stale-if-error` and RFC 8246's `immutable`.
///
/// Directive names compare case-insensitively; repeated fields arrive joined by commas and are
/// read as one list. A `max-age` that is not a number counts as 0, so such a response is stale
/// at once rather than cached by accident; other malformed arguments are ignored.
struct CacheControl: Sendable, Hashable {
    /// `no-store`: never write this response (or, on a request, its response).
    var noStore = false
    /// Unqualified `no-cache`: a stored response may only be used after the server confirms it.
    var noCache = false
    /// The fields named by a qualified `no-cache="a, b"` (lowercased): the response may be reused,
    /// but these fields may not be without revalidation (RFC 9111 §5.2.2.4), so they are not stored.
    var noCacheFields: [String] = []
    /// `must-revalidate`: once stale, never served without the server's confirmation.
    var mustRevalidate = false
    /// `max-age=N` in seconds: how long a response stays fresh (on a request: the oldest response accepted).
    var maxAge: Int?
    /// `public` or `private` (qualified or not): the response may be stored even if its status is
    /// not cacheable by default. A private cache may store every field of a `private="a"` response (§5.2.2.7).
    var explicitlyCacheable = false
    /// `immutable` (RFC 8246): while fresh, the response is not revalidated even when the request says `no-cache`.
    var immutable = false
    /// `must-understand` (§5.2.2.3): store the response when its status is understood, even with `no-store`.
    var mustUnderstand = false
    /// Request `max-stale[=N]` (§5.2.1.2): a stale response is accepted up to N seconds past its
    /// lifetime; `.infinity` without an argument.
    var maxStale: Double?
    /// Request `min-fresh=N` (§5.2.1.3): the response must stay fresh for at least N more seconds.
    var minFresh: Int?
    /// Request `only-if-cached` (§5.2.1.7): answer from the cache or not at all.
    var onlyIfCached = false
    /// `stale-while-revalidate=N` (RFC 5861 §3): for N seconds past its lifetime the stale response
    /// answers at once while a background request refreshes it.
    var staleWhileRevalidate: Int?
    /// `stale-if-error=N` (RFC 5861 §4): for N seconds past its lifetime the stale response answers
    /// when the server fails (network error, 500, 502, 503, 504).
    var staleIfError: Int?

    /// Parses a field value; `nil` or empty means no directives.
    init(_ value: String?) {
        guard let value, !value.isEmpty else { return }
        for directive in Self.directives(in: value) {
            let seconds = directive.argument.flatMap(Self.deltaSeconds)
            switch directive.name {
            case "no-store": noStore = true
            case "no-cache":
                if let fields = directive.argument { noCacheFields += Self.fieldNames(fields) } else { noCache = true }
            case "must-revalidate": mustRevalidate = true
            case "public", "private": explicitlyCacheable = true
            case "immutable": immutable = true
            case "must-understand": mustUnderstand = true
            case "only-if-cached": onlyIfCached = true
            case "max-age":
                let lifetime = seconds ?? 0
                maxAge = min(maxAge ?? lifetime, lifetime)
            case "max-stale":
                if directive.argument == nil { maxStale = .infinity } else if let seconds { maxStale = Double(seconds) }
            case "min-fresh": if let seconds { minFresh = seconds }
            case "stale-while-revalidate": if let seconds { staleWhileRevalidate = seconds }
            case "stale-if-error": if let seconds { staleIfError = seconds }
            default: break
            }
        }
    }

    /// A `delta-seconds` value (RFC 9111 §1.2.2): digits only; too large a number is capped at
    /// 2³¹ − 1, which a 32-bit `Int` (watchOS) holds too (RFC 9111 says 2³¹; a second less changes nothing).
    static func deltaSeconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(text).map { min($0, maximumDeltaSeconds) } ?? maximumDeltaSeconds
    }

    /// The largest `delta-seconds` kept: `Int32.max`, the same on 32- and 64-bit platforms.
    static let maximumDeltaSeconds = Int(Int32.max)

    private static func fieldNames(_ list: String) -> [String] {
        list.split(separator: ",").map { String($0).trimmingASCIIWhitespace().lowercased() }.filter { !$0.isEmpty }
    }

    /// `name[=argument]` pairs, splitting on commas outside quoted strings.
    private static func directives(in value: String) -> [(name: String, argument: String?)] {
        var result: [(name: String, argument: String?)] = []
        var current = ""
        var inQuotes = false
        func finish() {
            let part = current.trimmingASCIIWhitespace()
            current = ""
            guard !part.isEmpty else { return }
            if let equals = part.firstIndex(of: "=") {
                var argument = String(part[part.index(after: equals)...]).trimmingASCIIWhitespace()
                if argument.count >= 2, argument.hasPrefix("\""), argument.hasSuffix("\"") { argument = String(argument.dropFirst().dropLast()) }
                result.append((String(part[..<equals]).trimmingASCIIWhitespace().lowercased(), argument))
            } else {
                result.append((part.lowercased(), nil))
            }
        }
        for character in value {
            if character == "\"" { inQuotes.toggle() }
            if character == ",", !inQuotes { finish() } else { current.append(character) }
        }
        finish()
        return result
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs (HTTP's optional whitespace).
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...end])
    }
}
