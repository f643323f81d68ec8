import Foundation

/// The validators a `DataCache` keeps with its responses: read them, or clear them so the next
/// request for a URL is unconditional and downloads the whole body again.
///
/// ```swift
/// let tag = await cache.eTag(for: url)        // "\"6b00f27b-11\""
/// await cache.removeValidators(for: url)      // next fetch: no If-None-Match
/// ```
///
/// Tags live inside the cache entries (there is no separate tag file to drift out of step),
/// so removing a response removes its tags too.
extension DataCache {
    /// The `ETag` stored for a GET of `url`, as the server sent it (quotes and `W/` included).
    public nonisolated func eTag(for url: URL) async -> String? {
        await response(for: url)?.eTag
    }

    /// The `Last-Modified` stored for a GET of `url`, as the server sent it.
    public nonisolated func lastModified(for url: URL) async -> String? {
        await response(for: url)?.lastModified
    }

    /// Forgets the `ETag` and `Last-Modified` stored for `url` (GET and HEAD); the bodies stay,
    /// but once stale they are downloaded again in full instead of revalidated.
    public nonisolated func removeValidators(for url: URL) async {
        for method in [HTTPMethod.get, .head] {
            let key = CacheKey.key(for: url, method: method)
            if let entry = await entry(forKey: key), let stripped = Self.withoutValidators(entry) {
                await store(stripped)
            }
        }
    }

    /// Forgets every stored `ETag` and `Last-Modified`, in memory and on disk.
    public nonisolated func removeAllValidators() async {
        await rewriteAll(Self.withoutValidators)
    }

    /// The entry without its validators, or `nil` when it has none.
    private static func withoutValidators(_ entry: CachedResponse) -> CachedResponse? {
        guard entry.hasValidator else { return nil }
        var fields = entry.fields
        fields.remove(named: "ETag")
        fields.remove(named: "Last-Modified")
        return entry.replacing(fields: fields)
    }
}
