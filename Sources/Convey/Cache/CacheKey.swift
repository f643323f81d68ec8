import Foundation

/// How a request maps to a cache key: the full URL, query string included, without a fragment.
///
/// URLCache on Linux drops the query string from its key, so `?page=1` and `?page=2` collide;
/// Convey's key keeps every character. GET responses are keyed by the URL alone; HEAD responses
/// (which have no body) get their own key so they never stand in for a GET.
enum CacheKey {
    /// The key for a request with `method` to `url`.
    static func key(for url: URL, method: HTTPMethod) -> String {
        var text = url.absoluteString
        if let hash = text.utf8.firstIndex(of: UInt8(ascii: "#")) { text = String(text[..<hash]) }
        return method.rawValue == "HEAD" ? "HEAD " + text : text
    }
}
