import Foundation

/// How a request maps to a cache key: the full URL, query string included, without a fragment
/// or user name and password, followed by the request's credential partition.
///
/// URLCache on Linux drops the query string from its key, so `?page=1` and `?page=2` collide;
/// Convey's key keeps every character. GET responses are keyed by the URL alone; HEAD responses
/// (which have no body) get their own key so they never stand in for a GET. A request carrying
/// credentials adds `partitionSeparator` and its `CredentialPartition` tag, so each set of
/// credentials has entries of its own. Older `Vary` variants of a response live under the key,
/// `variantSeparator` and their request values.
enum CacheKey {
    /// Separates a key from a variant's request values; a control character no URL contains.
    static let variantSeparator: Character = "\u{1F}"
    /// Separates the URL from the credential partition; a control character no URL contains.
    static let partitionSeparator: Character = "\u{1E}"

    /// The key for a request with `method` to `url` in `partition`.
    static func key(for url: URL, method: HTTPMethod, partition: CredentialPartition = .anonymous) -> String {
        var text = url.user == nil && url.password == nil ? url.absoluteString : withoutUserInfo(url)
        if let hash = text.utf8.firstIndex(of: UInt8(ascii: "#")) { text = String(text[..<hash]) }
        if method.rawValue == "HEAD" { text = "HEAD " + text }
        if let tag = partition.tag { text += String(partitionSeparator) + tag }
        return text
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

    /// `url` as text without its user name and password, which belong to the partition, not the key.
    private static func withoutUserInfo(_ url: URL) -> String {
        let text = url.absoluteString
        guard let scheme = text.range(of: "://") else { return text }
        let authorityEnd = text[scheme.upperBound...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
        guard let at = text[scheme.upperBound..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<scheme.upperBound]) + String(text[text.index(after: at)...])
    }
}
