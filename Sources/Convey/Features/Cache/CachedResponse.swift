import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One stored response: status, header fields and body, with what the cache needs to judge it.
/// Convey's SPI for its tools (`@_spi(Tools)`: the cache benchmark reads and writes entries
/// directly); apps store with `DataCache.store(_:for:statusCode:headers:receivedAt:)` and read
/// with `DataCache.data(from:strategy:server:)`.
///
/// Freshness follows RFC 9111 §4.2: the lifetime comes from `max-age`, else `Expires` minus
/// `Date` (an invalid `Expires` means already expired), else, when the server turns heuristics on
/// (`ServerConfiguration.usesHeuristicFreshness`), a share of the time since `Last-Modified`, else 0.
/// The age comes from `Age`, `Date` and the time in transit and in the cache.
@_spi(Tools) public struct CachedResponse: Sendable {
    /// Every field lives in one immutable object, so handing an entry out of the cache costs one
    /// reference count, not one per string, dictionary and buffer inside it.
    private let storage: Storage

    /// The cache key: the full URL, query string included (`"HEAD "` in front for HEAD requests).
    public var key: String { storage.key }
    /// The stored status code.
    public var statusCode: Int { storage.statusCode }
    /// The stored header fields in the order received, repeats kept.
    public var fields: Headers { storage.fields }
    /// The stored header fields, one combined value per name (names as the server sent them).
    public var headers: [String: String] { storage.fields.combined }
    /// The stored body.
    public var body: Data { storage.body }
    /// When the request that produced this response was sent.
    public var requestedAt: Date { storage.requestedAt }
    /// When the response arrived (or was last confirmed by a 304).
    public var receivedAt: Date { storage.receivedAt }
    /// The request header values named by the response's `Vary`, lowercased names, normalised
    /// values, `nil` for absent.
    var varyingRequestHeaders: [VaryingHeader] { storage.varyingRequestHeaders }
    /// The tag of the credential partition the response was stored for (`CredentialPartition`), `nil` for the anonymous one; never a credential itself.
    var credentialPartition: String? { storage.credentialPartition }
    /// The `ETag` validator, when the server sent one.
    public var eTag: String? { storage.eTag }
    /// The `Last-Modified` validator, when the server sent one.
    public var lastModified: String? { storage.lastModified }
    /// How long the response stays fresh after it was generated, in seconds, from `max-age` or
    /// `Expires`; 0 when the server gave no lifetime (heuristic freshness is not included).
    public var freshnessLifetime: TimeInterval { storage.freshnessLifetime ?? 0 }
    /// The response's `Cache-Control` directives.
    var control: CacheControl { storage.control }
    /// The age the response already had when it arrived (RFC 9111 §4.2.3 `corrected_initial_age`).
    var initialAge: TimeInterval { storage.initialAge }

    /// A request header value the stored response depends on through `Vary`.
    struct VaryingHeader: Sendable, Hashable {
        /// The header name, lowercased.
        let name: String
        /// The value the original request carried, normalised (`HTTPCacheRules.normalisedVaryValue`); `nil` when it had none.
        let value: String?
    }

    /// Creates an entry, for seeding a cache by hand (responses an app ships to work offline, say); the pipeline stores responses itself.
    ///
    /// - Parameters:
    ///   - url: the URL it answers; the key is its full text without a fragment.
    ///   - statusCode: the status to replay.
    ///   - headers: the header fields to replay; `Cache-Control`, `Expires`, `ETag` and the like apply as usual.
    ///   - body: the body to replay.
    ///   - receivedAt: when it arrived; freshness counts from here.
    public init(url: URL, statusCode: Int = 200, headers: [String: String] = [:], body: Data, receivedAt: Date = Date()) {
        self.init(url: url, statusCode: statusCode, fields: Headers(headers), body: body, receivedAt: receivedAt)
    }

    /// Creates an entry from ordered header fields (repeats kept), for seeding a cache by hand (responses an app ships to work offline, say).
    public init(url: URL, statusCode: Int = 200, fields: Headers, body: Data, receivedAt: Date = Date()) {
        self.init(key: CacheKey.key(for: url, method: .get), statusCode: statusCode, fields: fields, body: body,
                  requestedAt: receivedAt, receivedAt: receivedAt, varyingRequestHeaders: [], credentialPartition: nil)
    }

    init(key: String, statusCode: Int, fields: Headers, body: Data, requestedAt: Date, receivedAt: Date,
         varyingRequestHeaders: [VaryingHeader], credentialPartition: String?) {
        storage = Storage(key: key, statusCode: statusCode, fields: fields, body: body, requestedAt: requestedAt, receivedAt: receivedAt,
                          varyingRequestHeaders: varyingRequestHeaders, credentialPartition: credentialPartition)
    }

    private final class Storage: Sendable {
        let key: String
        let statusCode: Int
        let fields: Headers
        let body: Data
        let requestedAt: Date
        let receivedAt: Date
        let varyingRequestHeaders: [VaryingHeader]
        let credentialPartition: String?
        let eTag: String?
        let lastModified: String?
        /// The explicit lifetime (`max-age`, `Expires`), or `nil` without one.
        let freshnessLifetime: TimeInterval?
        /// `Date` − `Last-Modified` in seconds, the base of heuristic freshness; `nil` without `Last-Modified`.
        let modifiedBeforeGeneration: TimeInterval?
        let control: CacheControl
        let initialAge: TimeInterval

        init(key: String, statusCode: Int, fields: Headers, body: Data, requestedAt: Date, receivedAt: Date,
             varyingRequestHeaders: [VaryingHeader], credentialPartition: String?) {
            self.key = key
            self.statusCode = statusCode
            self.fields = fields
            self.body = body
            self.requestedAt = requestedAt
            self.receivedAt = receivedAt
            self.varyingRequestHeaders = varyingRequestHeaders
            self.credentialPartition = credentialPartition

            eTag = fields.first(named: "ETag")
            lastModified = fields.first(named: "Last-Modified")
            control = CacheControl(fields["Cache-Control"])
            let date = fields.first(named: "Date").flatMap(HTTPDate.parse)
            if let maxAge = control.maxAge {
                freshnessLifetime = TimeInterval(maxAge)
            } else if let expiresText = fields.first(named: "Expires") {
                // An invalid Expires (often "0" or "-1") means "already expired" (RFC 9111 §5.3).
                freshnessLifetime = HTTPDate.parse(expiresText).map { max(0, $0.timeIntervalSince(date ?? receivedAt)) } ?? 0
            } else {
                freshnessLifetime = nil
            }
            modifiedBeforeGeneration = lastModified.flatMap(HTTPDate.parse).map { max(0, (date ?? receivedAt).timeIntervalSince($0)) }
            let ageValue = CachedResponse.ageValue(of: fields) ?? 0
            let apparentAge = max(0, receivedAt.timeIntervalSince(date ?? receivedAt))
            let responseDelay = max(0, receivedAt.timeIntervalSince(requestedAt))
            initialAge = max(apparentAge, ageValue + responseDelay)
        }
    }

    /// The `Age` value (RFC 9111 §5.1): the first value of the first `Age` field, when it is a
    /// non-negative integer; anything else (`7200.0`, `-1`, `soon`) is invalid and ignored.
    static func ageValue(of fields: Headers) -> TimeInterval? {
        guard let line = fields.values(named: "Age").first else { return nil }
        let first = line.split(separator: ",", omittingEmptySubsequences: false).first.map { String($0).trimmingASCIIWhitespace() } ?? ""
        return CacheControl.deltaSeconds(first).map(TimeInterval.init)
    }

    /// The URL the entry answers, when its key is a URL.
    public var url: URL? {
        let text = key.hasPrefix("HEAD ") ? String(key.dropFirst(5)) : key
        return URL(string: text.split(separator: CacheKey.variantSeparator, maxSplits: 1).first.map(String.init) ?? text)
    }

    /// The value of a stored header (every line of it combined), compared case-insensitively.
    public func header(_ name: String) -> String? {
        fields[name]
    }

    /// The response's age in seconds at `now` (RFC 9111 §4.2.3 `current_age`).
    public func age(at now: Date = Date()) -> TimeInterval {
        initialAge + max(0, now.timeIntervalSince(receivedAt))
    }

    /// The lifetime in seconds: explicit (`max-age`, `Expires`), else from `heuristic` when the
    /// status and a `Last-Modified` allow it (RFC 9111 §4.2.2), else 0.
    func lifetime(heuristic: HeuristicFreshness?) -> (seconds: TimeInterval, isHeuristic: Bool) {
        if let explicit = storage.freshnessLifetime { return (explicit, false) }
        guard let heuristic, let base = storage.modifiedBeforeGeneration,
              HTTPCacheRules.heuristicallyCacheableStatuses.contains(statusCode) || control.explicitlyCacheable
        else { return (0, false) }
        return (heuristic.lifetime(sinceModified: base), true)
    }

    /// How many seconds past its lifetime the response is at `now`; negative while fresh.
    func staleness(at now: Date, heuristic: HeuristicFreshness? = nil) -> TimeInterval {
        age(at: now) - lifetime(heuristic: heuristic).seconds
    }

    /// Whether the response is fresh at `now`: younger than its explicit lifetime and not marked `no-cache`.
    public func isFresh(at now: Date = Date()) -> Bool {
        isFresh(at: now, heuristic: nil)
    }

    /// Whether the response is fresh at `now`, counting heuristic freshness when `heuristic` is given.
    func isFresh(at now: Date, heuristic: HeuristicFreshness?) -> Bool {
        !control.noCache && staleness(at: now, heuristic: heuristic) < 0
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
        for field in fields { total += field.name.utf8.count + field.value.utf8.count + 32 }
        return total
    }

    /// The same entry with other fields (freshness is recomputed from them) or another key.
    func replacing(fields newFields: Headers? = nil, key newKey: String? = nil, requestedAt: Date? = nil, receivedAt: Date? = nil,
                   varyingRequestHeaders: [VaryingHeader]? = nil) -> CachedResponse {
        CachedResponse(key: newKey ?? key, statusCode: statusCode, fields: newFields ?? fields, body: body,
                       requestedAt: requestedAt ?? self.requestedAt, receivedAt: receivedAt ?? self.receivedAt,
                       varyingRequestHeaders: varyingRequestHeaders ?? self.varyingRequestHeaders,
                       credentialPartition: credentialPartition)
    }

    /// The stored fields as they are replayed: `Age` set to the current age (RFC 9111 §5.1).
    func replayedFields(at now: Date) -> Headers {
        var replayed = fields
        replayed.remove(named: "Age")
        // Capped as `delta-seconds` are (RFC 9111 §1.2.2): a crafted `Date` far in the past must
        // not overflow a 32-bit `Int` (watchOS).
        let seconds = Int64(min(age(at: now), Double(CacheControl.maximumDeltaSeconds)))
        replayed.appendLine(Header(name: "Age", value: String(seconds)))
        return replayed
    }
}
