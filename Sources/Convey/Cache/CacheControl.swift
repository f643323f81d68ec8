/// The directives of a `Cache-Control` field (RFC 9111 §5.2) that a private client cache acts on.
///
/// Directive names compare case-insensitively; repeated fields arrive joined by commas and are
/// read as one list. A `max-age` that is not a number counts as 0, so such a response is stale
/// at once rather than cached by accident.
struct CacheControl: Sendable, Hashable {
    /// `no-store`: never write this response (or, on a request, its response).
    var noStore = false
    /// `no-cache`: a stored response may only be used after the server confirms it.
    var noCache = false
    /// `must-revalidate`: once stale, never served without the server's confirmation.
    var mustRevalidate = false
    /// `max-age=N` in seconds: how long a response stays fresh (on a request: the oldest response accepted).
    var maxAge: Int?
    /// `public` or `private`: the response may be stored even if its status is not cacheable by default.
    var explicitlyCacheable = false

    /// Parses a field value; `nil` or empty means no directives.
    init(_ value: String?) {
        guard let value, !value.isEmpty else { return }
        for directive in Self.directives(in: value) {
            switch directive.name {
            case "no-store": noStore = true
            case "no-cache": noCache = true
            case "must-revalidate": mustRevalidate = true
            case "public", "private": explicitlyCacheable = true
            case "max-age":
                let seconds = directive.argument.flatMap { Int($0) }.map { max(0, $0) } ?? 0
                maxAge = min(maxAge ?? seconds, seconds)
            default: break
            }
        }
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
