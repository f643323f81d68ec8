import Foundation

/// How a request maps to a cache key: the full URL, query string included, without a fragment.
///
/// URLCache on Linux drops the query string from its key, so `?page=1` and `?page=2` collide;
/// Convey's key keeps every character. GET responses are keyed by the URL alone; HEAD responses
/// (which have no body) get their own key so they never stand in for a GET. Older `Vary`
/// variants of a response live under the key, `variantSeparator` and their request values.
enum CacheKey {
    /// Separates a key from a variant's request values; a control character no URL contains.
    static let variantSeparator: Character = "\u{1F}"

    /// The key for a request with `method` to `url`.
    static func key(for url: URL, method: HTTPMethod) -> String {
        var text = url.absoluteString
        if let hash = text.utf8.firstIndex(of: UInt8(ascii: "#")) { text = String(text[..<hash]) }
        return method.rawValue == "HEAD" ? "HEAD " + text : text
    }

    /// The key of the variant of `key` selected by these request values.
    static func variantKey(_ key: String, _ varying: [CachedResponse.VaryingHeader]) -> String {
        var text = key
        text.append(variantSeparator)
        for header in varying {
            text += header.name + (header.value.map { "=" + $0 } ?? "!") + "\n"
        }
        return text
    }
}
