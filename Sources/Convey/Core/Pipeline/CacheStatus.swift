/// Where a response came from, as far as the cache is concerned (`ServerResponse.cacheStatus`).
public enum CacheStatus: String, Sendable, Hashable, Codable {
    /// From the network, complete. The cache may have stored it.
    case network
    /// From the cache without contacting the server: a fresh response under `.localFirst`, or
    /// any usable response under `.localOnly`.
    case hit
    /// The server answered a conditional request with 304 Not Modified: the body is the stored
    /// one, the headers are the stored ones updated with the 304's.
    case revalidated
    /// The network failed (or the server answered 500, 502, 503 or 504) under `.remoteFirst`, and
    /// a stored response answered instead.
    case fallback
    /// From the cache without contacting the server, fresh only by heuristic freshness (no
    /// `max-age` or `Expires`; a share of the time since `Last-Modified`, see
    /// `ServerConfiguration.usesHeuristicFreshness`).
    case heuristicHit
    /// From the cache without waiting for the server although stale: within the response's
    /// `stale-while-revalidate` window (a background request refreshes it, once per URL) or within
    /// the request's `max-stale`.
    case stale
    /// An identical request was already in flight: this task waited for its exchange instead of
    /// sending its own (request coalescing). Echo shows the shared exchange once, on the task that sent it.
    case joined
    /// The background request a `.stale` answer started. Tasks never see it; it appears in echo,
    /// recordings and the server's `didFinish(task:response:error:)`.
    case backgroundRefresh

    /// Whether the body came from the cache or another task's exchange: everything but `.network`
    /// and `.backgroundRefresh`.
    public var isFromCache: Bool { self != .network && self != .backgroundRefresh }
    /// Whether the server confirmed the stored response (`.revalidated`).
    public var wasRevalidated: Bool { self == .revalidated }
}

/// How the cache answered is kept on the response it answered with, under its own key.
extension CacheStatus: RunValueKey {
    typealias Value = CacheStatus
}
