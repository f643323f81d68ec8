import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What answered one attempt's request, and how the cache took part.
struct CacheAnswer {
    /// The request as sent, with any conditional headers the cache added; as built when nothing was sent.
    let request: URLRequest
    /// The response the task sees: from the network, or replayed from the cache.
    let response: TransportResponse
    /// Where the response came from.
    let status: CacheStatus
}

/// The cache's part in one attempt, called by `TaskRunner` in place of a bare send: it answers
/// from the cache, adds conditional headers, or lets the request through, and afterwards stores
/// the response, turns a 304 into the stored body, or falls back to a stored response.
@ConveyActor
struct CacheCoordinator {
    /// Sends a request over the network.
    typealias Send = (URLRequest) async throws -> TransportResponse

    private let cache: DataCache?
    private let strategy: CacheStrategy
    private let cachesAuthorizedResponses: Bool

    /// Statuses after which `.remoteFirst` falls back to a stored response (RFC 5861's stale-if-error set).
    private static let fallbackStatuses: Set<Int> = [500, 502, 503, 504]

    /// The coordinator for a run of `task` against `server`.
    init<Task: DownloadingTask>(task: Task, server: ConveyServer) {
        cache = server.configuration.cache
        strategy = task.cacheStrategy
        cachesAuthorizedResponses = task.cachesAuthorizedResponses
    }

    /// Answers `request` from the cache, the network (through `send`), or both.
    func respond(to request: URLRequest, send: Send) async throws -> CacheAnswer {
        if strategy == .localOnly { return try await answerLocally(request) }
        guard let cache, strategy != .never, let url = request.url else { return try await network(request, send) }
        let method = request.httpMethod ?? "GET"
        guard method == "GET" || method == "HEAD" else {
            let answer = try await network(request, send)
            if HTTPCacheRules.isUnsafe(method), (200..<400).contains(answer.response.response.statusCode) {
                await cache.removeResponse(for: url)
            }
            return answer
        }
        guard reasonToBypass(request) == nil else { return try await network(request, send) }

        let key = CacheKey.key(for: url, method: HTTPMethod(rawValue: method))
        let requestControl = HTTPCacheRules.requestControl(request)
        let stored = strategy == .skipLocal ? nil : await matchingEntry(key: key, in: cache, for: request)
        if strategy == .localFirst, let stored, stored.isFresh(), Self.accepts(stored, requestControl) {
            return CacheAnswer(request: request, response: try replay(stored, url: url), status: .hit)
        }

        var sending = request
        if let stored, stored.hasValidator {
            if let tag = stored.eTag { sending.setValue(tag, forHTTPHeaderField: "If-None-Match") }
            if let date = stored.lastModified { sending.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        }
        let requestedAt = Date()
        let sent: TransportResponse
        do {
            sent = try await send(sending)
        } catch {
            if strategy == .remoteFirst, !Self.isCancellation(error), let stored, stored.isUsableWithoutServer() {
                return CacheAnswer(request: sending, response: try replay(stored, url: url), status: .fallback)
            }
            throw error
        }
        let receivedAt = Date()
        let status = sent.response.statusCode

        if strategy == .remoteFirst, Self.fallbackStatuses.contains(status), let stored, stored.isUsableWithoutServer() {
            return CacheAnswer(request: sending, response: try replay(stored, url: url), status: .fallback)
        }
        if status == 304, let stored, stored.hasValidator {
            guard HTTPCacheRules.notModified(ResponseHead(sent.response), confirms: stored) else {
                // The 304 confirms another representation than ours: drop it and ask without conditions.
                await cache.remove(key: key)
                return try await respond(to: request, send: send)
            }
            let refreshed = stored.replacing(
                fields: HTTPCacheRules.merge(stored.fields, with: ResponseHead(sent.response).fields), requestedAt: requestedAt, receivedAt: receivedAt,
                varyingRequestHeaders: HTTPCacheRules.varyingHeaders(vary: sent.response.value(forHTTPHeaderField: "Vary") ?? stored.header("Vary"), request: request))
            if CacheControl(refreshed.header("Cache-Control")).noStore || requestControl.noStore {
                await cache.remove(key: key)
            } else {
                await cache.storeInBackground(refreshed)
            }
            return CacheAnswer(request: sending, response: try replay(refreshed, url: url), status: .revalidated)
        }

        if HTTPCacheRules.reasonNotToStore(request: request, head: ResponseHead(sent.response), requestControl: requestControl) == nil {
            await cache.storeInBackground(CachedResponse(
                key: key, statusCode: status, fields: HTTPCacheRules.storedFields(of: ResponseHead(sent.response).fields),
                body: method == "HEAD" ? Data() : sent.data, requestedAt: requestedAt, receivedAt: receivedAt,
                varyingRequestHeaders: HTTPCacheRules.varyingHeaders(vary: sent.response.value(forHTTPHeaderField: "Vary"), request: request),
                authorizationFingerprint: HTTPCacheRules.authorizationFingerprint(of: request)))
        } else if status < 500 {
            // A newer answer that may not be kept makes the stored one obsolete; a server error does not.
            await cache.remove(key: key)
        }
        return CacheAnswer(request: sending, response: sent, status: .network)
    }

    /// `.localOnly`: a usable stored response, or `ConveyError.cache` saying why there is none.
    private func answerLocally(_ request: URLRequest) async throws -> CacheAnswer {
        let url = request.url
        func notCached(_ reason: String) -> ConveyError {
            ConveyError.cache(CacheFailure(kind: .notCached, url: url, reason: reason))
        }
        guard let cache else { throw notCached("the server has no cache (ServerConfiguration.cache is nil)") }
        guard let url else { throw notCached("the request has no URL") }
        let method = request.httpMethod ?? "GET"
        guard method == "GET" || method == "HEAD" else { throw notCached("only GET and HEAD responses are cached, not \(method)") }
        if let reason = reasonToBypass(request) { throw notCached(reason) }
        guard let stored = await cache.entry(forKey: CacheKey.key(for: url, method: HTTPMethod(rawValue: method))) else {
            throw notCached("nothing is stored for it")
        }
        if let reason = HTTPCacheRules.mismatch(of: stored, with: request) { throw notCached(reason) }
        guard stored.isUsableWithoutServer() else {
            throw notCached("the stored response is stale and says it must be revalidated (no-cache or must-revalidate)")
        }
        return CacheAnswer(request: request, response: try replay(stored, url: url), status: .hit)
    }

    /// Why a GET or HEAD request is neither read from nor written to the cache, or `nil` when it is.
    private func reasonToBypass(_ request: URLRequest) -> String? {
        if request.value(forHTTPHeaderField: "Authorization") != nil, !cachesAuthorizedResponses {
            return "the request carries Authorization and the task's cachesAuthorizedResponses is false"
        }
        if request.value(forHTTPHeaderField: "Range") != nil { return "range requests are not cached" }
        for field in ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"]
        where request.value(forHTTPHeaderField: field) != nil {
            return "the request carries its own \(field)"
        }
        return nil
    }

    private func matchingEntry(key: String, in cache: DataCache, for request: URLRequest) async -> CachedResponse? {
        guard let stored = await cache.entry(forKey: key), HTTPCacheRules.mismatch(of: stored, with: request) == nil else { return nil }
        return stored
    }

    private func network(_ request: URLRequest, _ send: Send) async throws -> CacheAnswer {
        CacheAnswer(request: request, response: try await send(request), status: .network)
    }

    private func replay(_ stored: CachedResponse, url: URL) throws -> TransportResponse {
        try TransportResponse(url: url, statusCode: stored.statusCode, headers: stored.replayedFields(at: Date()).combined, body: stored.body)
    }

    /// Whether the request's own directives let a fresh stored response answer without the server.
    private static func accepts(_ stored: CachedResponse, _ requestControl: CacheControl) -> Bool {
        guard !requestControl.noCache else { return false }
        guard let maxAge = requestControl.maxAge else { return true }
        return stored.age() <= TimeInterval(maxAge)
    }

    private static func isCancellation(_ error: any Error) -> Bool {
        error.isCancellation || (error as? URLError)?.code == .cancelled
    }
}
