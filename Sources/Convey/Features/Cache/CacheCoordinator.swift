import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What answered one attempt's request, and how the cache took part.
struct CacheAnswer: Sendable {
    /// The request as sent, with any conditional headers the cache added; as built when nothing was sent.
    let request: OutgoingRequest
    /// The response the task sees: from the network, or replayed from the cache.
    let response: TransportResponse
    /// Where the response came from.
    let status: CacheStatus
    /// What the server sent when it differs from `response` (a 304 the stored body answered), for echo.
    var received: TransportResponse?
    /// The values the steps below attached to a response from the network (`ExchangeTags`).
    var tags = RunValues()

    /// The same answer with another status.
    func with(status: CacheStatus) -> CacheAnswer {
        CacheAnswer(request: request, response: response, status: status, received: received, tags: tags)
    }
}

/// The cache's part in one hop of an attempt, called by `CacheStep` in place of a bare send
/// (so each hop of a redirect chain goes through it, and a stored 301 answers without the
/// network): it answers from the cache, adds conditional headers, shares an identical request's
/// exchange in flight, or lets the request through, and afterwards stores the response, turns a
/// 304 into the stored body, falls back to a stored response, or refreshes a stale one in the background.
struct CacheCoordinator: Sendable {
    /// Sends a request over the network, in the calling task (cancelling it stops the send), or
    /// in a task of its own that only its cancellation stops (a shared or background exchange); a
    /// redirect comes back as the response, with the values the steps below attached to it.
    typealias Send = @Sendable (_ request: OutgoingRequest, _ inTaskOfItsOwn: Bool) async throws -> (response: TransportResponse, tags: RunValues)

    private let cache: DataCache?
    private let strategy: CacheStrategy
    private let cachesAuthorizedResponses: Bool
    /// Names the credential headers beyond the standard ones: the server's `redaction`.
    private let credentials: Redaction
    /// What besides the request decides an exchange's outcome for this task (its server, size
    /// limit, idle timeout), so only tasks under the same rules share an exchange.
    private let exchangeRules: CachePolicy.ExchangeRules
    private let heuristic: HeuristicFreshness?
    private let coalesces: Bool
    private let reporter: CacheExchangeReporter
    /// The attempt the cache answers for, whose observers hear of its own exchanges.
    private let attempt: StepContext

    /// Statuses after which a stored response may answer instead (RFC 5861's stale-if-error set).
    private static let fallbackStatuses: Set<Int> = [500, 502, 503, 504]

    /// The coordinator for `attempt` of a run under `policy`.
    init(policy: CachePolicy, attempt: StepContext) {
        self.attempt = attempt
        cache = policy.cache
        strategy = policy.strategy
        cachesAuthorizedResponses = policy.cachesAuthorizedResponses
        credentials = policy.credentials
        exchangeRules = policy.exchangeRules
        heuristic = policy.heuristic
        coalesces = policy.coalesces
        reporter = policy.reporter
    }

    /// Answers `request` from the cache, the network (through `send`), or both: one hop, a
    /// redirect being an answer like any other.
    func respond(to request: OutgoingRequest, cancellation: ExchangeCancellation, send: @escaping Send) async throws -> CacheAnswer {
        if strategy == .localOnly { return try await answerLocally(request) }
        guard let cache, strategy != .never else { return try await network(request, send) }
        let url = request.url
        let method = request.method.rawValue
        guard method == "GET" || method == "HEAD" else {
            let answer = try await network(request, send)
            if HTTPCacheRules.isUnsafe(method), (200..<400).contains(answer.response.head.statusCode) {
                await cache.removeResponses(for: url, in: cache.partition(of: request, credentials: credentials))
            }
            return answer
        }
        guard reasonToBypass(request) == nil else { return try await network(request, send) }
        let requestControl = HTTPCacheRules.requestControl(request)
        // RFC 9111 §5.2.1.7: only-if-cached never sends; without a usable stored response it fails.
        if requestControl.onlyIfCached { return try await answerLocally(request) }

        let partition = cache.partition(of: request, credentials: credentials)
        let key = CacheKey.key(for: url, method: HTTPMethod(rawValue: method), partition: partition)
        let stored = strategy == .skipLocal ? nil : await cache.matchingEntry(forKey: key, request: request, in: partition)
        if strategy == .localFirst, let stored {
            let now = cache.clock.now()
            switch answerWithoutServer(stored, requestControl, at: now) {
            case .serve(let status):
                return CacheAnswer(request: request, response: replay(stored, url: url, at: now), status: status)
            case .serveWhileRefreshing:
                refreshInBackground(stored, request: request, url: url, key: key, partition: partition, cache: cache, send: send)
                return CacheAnswer(request: request, response: replay(stored, url: url, at: now), status: .stale)
            case .askServer:
                break
            }
        }

        let sending = Self.conditional(request, on: stored)
        guard coalesces, request.body == nil else {
            return try await exchange(sending, for: request, url: url, stored: stored, key: key, partition: partition, cache: cache,
                                      inTaskOfItsOwn: false, send: send)
        }
        let shared = try await cache.coalescer.run(key: coalescingKey(sending), cancellation: cancellation) {
            try await self.exchange(sending, for: request, url: url, stored: stored, key: key, partition: partition, cache: cache,
                                    inTaskOfItsOwn: true, send: send)
        }
        return shared.joined ? shared.answer.with(status: .joined) : shared.answer
    }

    /// What a stored response may do for a request without the server.
    private enum LocalAnswer {
        case serve(CacheStatus)
        case serveWhileRefreshing
        case askServer
    }

    /// RFC 9111 §4.2 and §5.2.1 with RFC 5861 and RFC 8246: whether `stored` answers at `now`.
    private func answerWithoutServer(_ stored: CachedResponse, _ requestControl: CacheControl, at now: Date) -> LocalAnswer {
        let staleness = stored.staleness(at: now, heuristic: heuristic)
        let age = stored.age(at: now)
        if let maxAge = requestControl.maxAge, age > TimeInterval(maxAge) { return .askServer }
        if !stored.control.noCache, staleness < 0 {
            // §5.2.1.4 no-cache on the request, unless the response is immutable (RFC 8246 §2).
            if requestControl.noCache, !stored.control.immutable { return .askServer }
            if let minFresh = requestControl.minFresh, -staleness < TimeInterval(minFresh) { return .askServer }
            return .serve(stored.lifetime(heuristic: heuristic).isHeuristic ? .heuristicHit : .hit)
        }
        // Stale (or no-cache): §4.2.4 forbids serving it when it says no-cache or must-revalidate.
        guard !requestControl.noCache, !stored.control.noCache, !stored.control.mustRevalidate else { return .askServer }
        if let maxStale = requestControl.maxStale, staleness <= maxStale { return .serve(.stale) }
        if let window = stored.control.staleWhileRevalidate, staleness <= TimeInterval(window) { return .serveWhileRefreshing }
        return .askServer
    }

    /// One exchange with the server for `request` (sent as `sending`), and what the cache makes of it.
    private func exchange(_ sending: OutgoingRequest, for request: OutgoingRequest, url: URL, stored: CachedResponse?, key: String,
                          partition: CredentialPartition, cache: DataCache, inTaskOfItsOwn: Bool, send: Send) async throws -> CacheAnswer {
        let requestControl = HTTPCacheRules.requestControl(request)
        let requestedAt = cache.clock.now()
        let sent: TransportResponse
        let tags: RunValues
        do {
            (sent, tags) = try await send(sending, inTaskOfItsOwn)
        } catch {
            if !Self.isCancellation(error), let stored, canFallBack(to: stored, requestControl, at: cache.clock.now()) {
                return CacheAnswer(request: sending, response: replay(stored, url: url, at: cache.clock.now()), status: .fallback)
            }
            throw error
        }
        let receivedAt = cache.clock.now()
        let head = sent.head

        if Self.fallbackStatuses.contains(head.statusCode), let stored, canFallBack(to: stored, requestControl, at: receivedAt) {
            return CacheAnswer(request: sending, response: replay(stored, url: url, at: receivedAt), status: .fallback)
        }
        if head.statusCode == 304, let stored, stored.hasValidator {
            guard HTTPCacheRules.notModified(head, confirms: stored) else {
                // The 304 confirms another representation than ours: show it, drop ours, ask without conditions.
                await reporter.report(sending, .success(sent), status: .network, startedAt: requestedAt, until: receivedAt, attempt: attempt)
                await cache.remove(key: stored.key)
                return try await exchange(request, for: request, url: url, stored: nil, key: key, partition: partition, cache: cache,
                                          inTaskOfItsOwn: inTaskOfItsOwn, send: send)
            }
            let refreshed = stored.replacing(
                fields: HTTPCacheRules.merge(stored.fields, with: head.fields), requestedAt: requestedAt, receivedAt: receivedAt,
                varyingRequestHeaders: HTTPCacheRules.varyingHeaders(vary: head.fields["Vary"] ?? stored.header("Vary"), request: request))
            if refreshed.control.noStore || requestControl.noStore {
                await cache.remove(key: stored.key)
            } else {
                await cache.storeVariantInBackground(refreshed)
            }
            return CacheAnswer(request: sending, response: replay(refreshed, url: url, at: receivedAt), status: .revalidated, received: sent)
        }

        let method = request.method
        if HTTPCacheRules.reasonNotToStore(request: request, head: head, requestControl: requestControl) == nil {
            await cache.storeVariantInBackground(CachedResponse(
                key: key, statusCode: head.statusCode, fields: HTTPCacheRules.storedFields(of: head.fields),
                body: method == .head ? Data() : sent.data, requestedAt: requestedAt, receivedAt: receivedAt,
                varyingRequestHeaders: HTTPCacheRules.varyingHeaders(vary: head.fields["Vary"], request: request),
                credentialPartition: partition.tag))
        } else if head.statusCode < 500, let obsolete = await cache.matchingEntry(forKey: key, request: request, in: partition) {
            // A newer answer that may not be kept makes the stored one obsolete; a server error does not.
            await cache.remove(key: obsolete.key)
        }
        return CacheAnswer(request: sending, response: sent, status: .network, tags: tags)
    }

    /// Whether `stored` may answer when the server fails: under `.remoteFirst` when usable without
    /// the server (§4.2.4), and under any strategy within a `stale-if-error` window (RFC 5861 §4)
    /// of the response or the request.
    private func canFallBack(to stored: CachedResponse, _ requestControl: CacheControl, at now: Date) -> Bool {
        if strategy == .remoteFirst, stored.isUsableWithoutServer(at: now) { return true }
        let window = max(stored.control.staleIfError ?? -1, requestControl.staleIfError ?? -1)
        return window >= 0 && stored.staleness(at: now, heuristic: heuristic) <= TimeInterval(window)
    }

    /// RFC 5861 §3: refreshes `stored` with a request of its own, once per key however many
    /// callers ask, echoed and recorded as a `.backgroundRefresh` exchange.
    private func refreshInBackground(_ stored: CachedResponse, request: OutgoingRequest, url: URL, key: String, partition: CredentialPartition,
                                     cache: DataCache, send: @escaping Send) {
        let sending = Self.conditional(request, on: stored)
        cache.coalescer.startDetached(key: "refresh " + key) {
            let startedAt = cache.clock.now()
            do {
                let answer = try await self.exchange(sending, for: request, url: url, stored: stored, key: key, partition: partition,
                                                     cache: cache, inTaskOfItsOwn: true, send: send)
                await self.reporter.report(answer.request, .success(answer.received ?? answer.response), status: .backgroundRefresh,
                                           startedAt: startedAt, until: cache.clock.now(), attempt: self.attempt)
                return answer
            } catch {
                await self.reporter.report(sending, .failure(error), status: .backgroundRefresh, startedAt: startedAt, until: cache.clock.now(),
                                           attempt: self.attempt)
                throw error
            }
        }
    }

    /// `.localOnly` and `only-if-cached`: a usable stored response, or `ConveyError.notCached` saying why there is none.
    private func answerLocally(_ request: OutgoingRequest) async throws -> CacheAnswer {
        let url = request.url
        func notCached(_ reason: String) -> ConveyError {
            ConveyError.notCached(url: url, reason: reason)
        }
        guard let cache else { throw notCached("the server has no cache (ServerConfiguration.cache is nil)") }
        let method = request.method.rawValue
        guard method == "GET" || method == "HEAD" else { throw notCached("only GET and HEAD responses are cached, not \(method)") }
        if let reason = reasonToBypass(request) { throw notCached(reason) }
        let partition = cache.partition(of: request, credentials: credentials)
        let key = CacheKey.key(for: url, method: HTTPMethod(rawValue: method), partition: partition)
        guard let newest = await cache.entry(forKey: key) else {
            throw notCached(partition.tag == nil ? "nothing is stored for it" : "nothing is stored for it with these credentials")
        }
        let stored: CachedResponse
        if let match = await cache.matchingEntry(forKey: key, request: request, in: partition) {
            stored = match
        } else {
            throw notCached(HTTPCacheRules.mismatch(of: newest, with: request, in: partition) ?? "no stored variant matches it")
        }
        let now = cache.clock.now()
        guard stored.isUsableWithoutServer(at: now) else {
            throw notCached("the stored response is stale and says it must be revalidated (no-cache or must-revalidate)")
        }
        let freshByHeuristic = stored.isFresh(at: now, heuristic: heuristic) && stored.lifetime(heuristic: heuristic).isHeuristic
        let status: CacheStatus = freshByHeuristic ? .heuristicHit : .hit
        return CacheAnswer(request: request, response: replay(stored, url: url, at: now), status: status)
    }

    /// Why a GET or HEAD request is neither read from nor written to the cache, or `nil` when it is.
    private func reasonToBypass(_ request: OutgoingRequest) -> String? {
        if !cachesAuthorizedResponses, let credential = credentialCarried(by: request) {
            return "the request carries credentials (\(credential)) and the task's cachesAuthorizedResponses is false"
        }
        if request.value(forHTTPHeaderField: "Range") != nil { return "range requests are not cached" }
        for field in ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"]
        where request.value(forHTTPHeaderField: field) != nil {
            return "the request carries its own \(field)"
        }
        return nil
    }

    private func network(_ request: OutgoingRequest, _ send: Send) async throws -> CacheAnswer {
        let (response, tags) = try await send(request, false)
        return CacheAnswer(request: request, response: response, status: .network, tags: tags)
    }

    private func replay(_ stored: CachedResponse, url: URL, at now: Date) -> TransportResponse {
        TransportResponse(url: url, statusCode: stored.statusCode, headers: stored.replayedFields(at: now), body: stored.body)
    }

    /// `request` with the validators of `stored` as `If-None-Match` / `If-Modified-Since`.
    private static func conditional(_ request: OutgoingRequest, on stored: CachedResponse?) -> OutgoingRequest {
        var sending = request
        if let stored, stored.hasValidator {
            if let tag = stored.eTag { sending.setValue(tag, forHTTPHeaderField: "If-None-Match") }
            if let date = stored.lastModified { sending.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        }
        return sending
    }

    /// The name of a credential `request` carries (a header name, or "URL user info"), or `nil`.
    private func credentialCarried(by request: OutgoingRequest) -> String? {
        if let name = request.allHTTPHeaderFields.keys.sorted().first(where: { CrossOriginCredentials.isCredential($0, credentials) }) {
            return name
        }
        return request.url.user != nil || request.url.password != nil ? "URL user info" : nil
    }

    /// Identical requests under the same rules share an exchange: same method, URL (user info
    /// included) and header fields (so the same cache key, credentials and every value a `Vary`
    /// could name), and the same server, size limit and timeout, so each caller's own limits hold.
    private func coalescingKey(_ request: OutgoingRequest) -> String {
        var key = "\(exchangeRules.server) \(exchangeRules.limit.map(String.init) ?? "no limit") \(exchangeRules.timeout)\n"
            + request.method.rawValue + " " + request.url.absoluteString
        for (name, value) in request.allHTTPHeaderFields.sorted(by: { $0.key.lowercased() < $1.key.lowercased() }) {
            key += "\n" + name.lowercased() + ": " + value
        }
        return key
    }

    private static func isCancellation(_ error: any Error) -> Bool {
        error.isCancellation || (error as? URLError)?.code == .cancelled
    }
}
