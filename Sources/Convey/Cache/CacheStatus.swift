/// Where a response came from, as far as the cache is concerned (`ServerResponse.cacheStatus`).
public enum CacheStatus: String, Sendable, Hashable {
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

    /// Whether the body came from the cache: `.hit`, `.revalidated` or `.fallback`.
    public var isFromCache: Bool { self != .network }
    /// Whether the server confirmed the stored response (`.revalidated`).
    public var wasRevalidated: Bool { self == .revalidated }
}
