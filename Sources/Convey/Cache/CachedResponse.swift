import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One stored response: status, headers and body, with what the cache needs to judge it.
///
/// Freshness follows RFC 9111 §4.2: the lifetime comes from `max-age`, else `Expires` minus
/// `Date`; the age from `Age`, `Date` and the time in transit and in the cache. A response with
/// neither `max-age` nor `Expires` is stale as soon as it is stored (Convey uses no heuristic
/// freshness), so it is revalidated before reuse when it has a validator.
public struct CachedResponse: Sendable {
    /// Every field lives in one immutable object, so handing an entry out of the cache costs one
    /// reference count, not one per string, dictionary and buffer inside it.
    private let storage: Storage

    /// The cache key: the full URL, query string included (`"HEAD "` in front for HEAD requests).
    public var key: String { storage.key }
    /// The stored status code.
    public var statusCode: Int { storage.statusCode }
    /// The stored header fields, names as the server sent them.
    public var headers: [String: String] { storage.headers }
    /// The stored body.
    public var body: Data { storage.body }
    /// When the request that produced this response was sent.
    public var requestedAt: Date { storage.requestedAt }
    /// When the response arrived (or was last confirmed by a 304).
    public var receivedAt: Date { storage.receivedAt }
    /// The request header values named by the response's `Vary`, lowercased names, `nil` for absent.
    var varyingRequestHeaders: [VaryingHeader] { storage.varyingRequestHeaders }
    /// The SHA-256 of the request's `Authorization` value, when it carried one; never the value itself.
    var authorizationFingerprint: String? { storage.authorizationFingerprint }
    /// The `ETag` validator, when the server sent one.
    public var eTag: String? { storage.eTag }
    /// The `Last-Modified` validator, when the server sent one.
    public var lastModified: String? { storage.lastModified }
    /// How long the response stays fresh after it was generated, in seconds; 0 when the server gave no lifetime.
    public var freshnessLifetime: TimeInterval { storage.freshnessLifetime }
    /// The response's `Cache-Control` directives.
    var control: CacheControl { storage.control }
    /// The age the response already had when it arrived (RFC 9111 §4.2.3 `corrected_initial_age`).
    var initialAge: TimeInterval { storage.initialAge }

    /// A request header value the stored response depends on through `Vary`.
    struct VaryingHeader: Sendable, Hashable {
        /// The header name, lowercased.
        let name: String
        /// The value the original request carried, whitespace-trimmed; `nil` when it had none.
        let value: String?
    }

    /// Creates an entry, for seeding a cache by hand or in tests; the pipeline stores responses itself.
    ///
    /// - Parameters:
    ///   - url: the URL it answers; the key is its full text without a fragment.
    ///   - statusCode: the status to replay.
    ///   - headers: the header fields to replay; `Cache-Control`, `Expires`, `ETag` and the like apply as usual.
    ///   - body: the body to replay.
    ///   - receivedAt: when it arrived; freshness counts from here.
    public init(url: URL, statusCode: Int = 200, headers: [String: String] = [:], body: Data, receivedAt: Date = Date()) {
        self.init(key: CacheKey.key(for: url, method: .get), statusCode: statusCode, headers: headers, body: body,
                  requestedAt: receivedAt, receivedAt: receivedAt, varyingRequestHeaders: [], authorizationFingerprint: nil)
    }

    init(key: String, statusCode: Int, headers: [String: String], body: Data, requestedAt: Date, receivedAt: Date,
         varyingRequestHeaders: [VaryingHeader], authorizationFingerprint: String?) {
        storage = Storage(key: key, statusCode: statusCode, headers: headers, body: body, requestedAt: requestedAt, receivedAt: receivedAt,
                          varyingRequestHeaders: varyingRequestHeaders, authorizationFingerprint: authorizationFingerprint)
    }

    private final class Storage: Sendable {
        let key: String
        let statusCode: Int
        let headers: [String: String]
        let body: Data
        let requestedAt: Date
        let receivedAt: Date
        let varyingRequestHeaders: [VaryingHeader]
        let authorizationFingerprint: String?
        let eTag: String?
        let lastModified: String?
        let freshnessLifetime: TimeInterval
        let control: CacheControl
        let initialAge: TimeInterval

        init(key: String, statusCode: Int, headers: [String: String], body: Data, requestedAt: Date, receivedAt: Date,
             varyingRequestHeaders: [VaryingHeader], authorizationFingerprint: String?) {
            self.key = key
            self.statusCode = statusCode
            self.headers = headers
            self.body = body
            self.requestedAt = requestedAt
            self.receivedAt = receivedAt
            self.varyingRequestHeaders = varyingRequestHeaders
            self.authorizationFingerprint = authorizationFingerprint

            let field = { (name: String) in headers.first { $0.key.equalsIgnoringASCIICase(name) }?.value }
            eTag = field("ETag")
            lastModified = field("Last-Modified")
            control = CacheControl(field("Cache-Control"))
            let date = field("Date").flatMap(HTTPDate.parse)
            if let maxAge = control.maxAge {
                freshnessLifetime = TimeInterval(maxAge)
            } else if let expiresText = field("Expires") {
                // An invalid Expires (often "0" or "-1") means "already expired" (RFC 9111 §5.3).
                freshnessLifetime = HTTPDate.parse(expiresText).map { max(0, $0.timeIntervalSince(date ?? receivedAt)) } ?? 0
            } else {
                freshnessLifetime = 0
            }
            let ageValue = field("Age").flatMap { TimeInterval($0.trimmingASCIIWhitespace()) }.map { max(0, $0) } ?? 0
            let apparentAge = max(0, receivedAt.timeIntervalSince(date ?? receivedAt))
            let responseDelay = max(0, receivedAt.timeIntervalSince(requestedAt))
            initialAge = max(apparentAge, ageValue + responseDelay)
        }
    }

    /// The URL the entry answers, when its key is a URL.
    public var url: URL? { URL(string: key.hasPrefix("HEAD ") ? String(key.dropFirst(5)) : key) }

    /// The value of a stored header, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.equalsIgnoringASCIICase(name) }?.value
    }

    /// The response's age in seconds at `now` (RFC 9111 §4.2.3 `current_age`).
    public func age(at now: Date = Date()) -> TimeInterval {
        initialAge + max(0, now.timeIntervalSince(receivedAt))
    }

    /// Whether the response is fresh at `now`: younger than its lifetime and not marked `no-cache`.
    public func isFresh(at now: Date = Date()) -> Bool {
        !control.noCache && freshnessLifetime > age(at: now)
    }

    /// Whether the response may answer without asking the server, even when stale: true unless
    /// it is stale and says `no-cache` or `must-revalidate` (RFC 9111 §4.2.4).
    public func isUsableWithoutServer(at now: Date = Date()) -> Bool {
        isFresh(at: now) || !(control.noCache || control.mustRevalidate)
    }

    /// Whether the entry can be revalidated with a conditional request.
    public var hasValidator: Bool { eTag != nil || lastModified != nil }

    /// About how many bytes the entry occupies in memory.
    var cost: Int {
        var total = body.count + key.utf8.count + 256
        for (name, value) in headers { total += name.utf8.count + value.utf8.count + 32 }
        return total
    }

    /// The same entry with other headers; freshness is recomputed from them.
    func replacingHeaders(_ newHeaders: [String: String], requestedAt: Date? = nil, receivedAt: Date? = nil,
                          varyingRequestHeaders: [VaryingHeader]? = nil) -> CachedResponse {
        CachedResponse(key: key, statusCode: statusCode, headers: newHeaders, body: body,
                       requestedAt: requestedAt ?? self.requestedAt, receivedAt: receivedAt ?? self.receivedAt,
                       varyingRequestHeaders: varyingRequestHeaders ?? self.varyingRequestHeaders,
                       authorizationFingerprint: authorizationFingerprint)
    }

    /// The stored headers as they are replayed: `Age` set to the current age (RFC 9111 §5.1).
    func replayedHeaders(at now: Date = Date()) -> [String: String] {
        var fields = headers.filter { !$0.key.equalsIgnoringASCIICase("Age") }
        fields["Age"] = String(Int(age(at: now)))
        return fields
    }
}
