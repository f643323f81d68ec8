/// How a task uses the server's cache (`ServerConfiguration.cache`). Chosen per task with
/// `DownloadingTask.cacheStrategy`; the default is the server's `defaultCacheStrategy`, itself
/// `.localFirst` unless changed.
///
/// Only GET and HEAD requests are read from and written to the cache, and only responses HTTP
/// allows a private cache to keep (see Docs/caching.md). A stored response "matches" a request
/// when its URL (query string included), the request headers its `Vary` names and the request's
/// `Authorization` are the same.
public enum CacheStrategy: String, Sendable, Hashable, CaseIterable {
    /// HTTP's own rules, as a browser applies them. A fresh matching response answers without the
    /// network (`CacheStatus.hit`). A stale one, or one marked `no-cache`, is revalidated with
    /// `If-None-Match` / `If-Modified-Since` when it has a validator: a 304 answers with the stored
    /// body (`.revalidated`), a 200 replaces it (`.network`). Without a usable response, the
    /// network answers and the response is stored if allowed. Network errors reach the task.
    case localFirst
    /// The network first, always: a conditional request when a matching response with a validator
    /// is stored (a 304 answers with the stored body, `.revalidated`), else a plain one; the
    /// response is stored if allowed. When the network fails (any error but cancellation) or the
    /// server answers 500, 502, 503 or 504, a matching stored response answers instead, however old
    /// (`.fallback`), unless it says `no-cache` or `must-revalidate` while stale; without one, the
    /// error or the 5xx reaches the task as usual.
    case remoteFirst
    /// The network, never reading the cache: an unconditional request whose response is stored if
    /// allowed (`.network`). Use it to refresh a stored response on demand.
    case skipLocal
    /// The cache only: nothing is ever sent. A matching stored response answers however old
    /// (`.hit`), unless it says `no-cache` or `must-revalidate` while stale; otherwise the task
    /// fails with `ConveyError.notCached`. Also fails that way without a cache
    /// or for methods other than GET and HEAD.
    case localOnly
    /// No cache at all for this task: nothing read, nothing stored, nothing invalidated.
    case never
}
