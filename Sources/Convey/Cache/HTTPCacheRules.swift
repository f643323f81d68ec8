import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 9111's rules for a private cache: what may be stored, what a stored response must match,
/// and how a 304 updates it.
enum HTTPCacheRules {
    /// Statuses a response may be stored with even without explicit freshness (RFC 9110 §15.1).
    static let heuristicallyCacheableStatuses: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Header fields never stored or replayed: they describe one connection, not the resource.
    private static let connectionHeaders: Set<String> = ["connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade"]

    /// Header fields a 304 never replaces (RFC 9111 §3.2): they describe the stored body.
    private static let bodyHeaders: Set<String> = ["content-length", "content-encoding", "content-range"]

    /// The cache directives of a request: its `Cache-Control`, or `Pragma: no-cache` when it has none.
    static func requestControl(_ request: URLRequest) -> CacheControl {
        if let field = request.value(forHTTPHeaderField: "Cache-Control") { return CacheControl(field) }
        var control = CacheControl(nil)
        control.noCache = request.value(forHTTPHeaderField: "Pragma")?.lowercased().contains("no-cache") ?? false
        return control
    }

    /// Why a response to `request` may not be stored, or `nil` when it may (RFC 9111 §3).
    static func reasonNotToStore(request: URLRequest, response: ResponseHead, requestControl: CacheControl) -> String? {
        let control = CacheControl(response.fields["Cache-Control"])
        if requestControl.noStore || control.noStore { return "no-store" }
        let status = response.statusCode
        if status == 206 || status == 304 || !(200..<600).contains(status) { return "status \(status) is not storable" }
        let explicitFreshness = control.maxAge != nil || response.fields["Expires"] != nil || control.explicitlyCacheable
        if !heuristicallyCacheableStatuses.contains(status), !explicitFreshness { return "status \(status) without explicit freshness" }
        if let vary = response.fields["Vary"], vary.contains("*") { return "Vary: *" }
        if let requested = request.url,
           CacheKey.key(for: requested, method: .get) != CacheKey.key(for: response.url, method: .get) {
            return "the response came through a redirect"
        }
        return nil
    }

    /// The request header values a response's `Vary` names, to store beside it.
    static func varyingHeaders(vary: String?, request: URLRequest) -> [CachedResponse.VaryingHeader] {
        guard let vary else { return [] }
        let names = Set(vary.split(separator: ",").map { String($0).trimmingASCIIWhitespace().lowercased() }.filter { !$0.isEmpty })
        return names.sorted().map { name in
            CachedResponse.VaryingHeader(name: name, value: request.value(forHTTPHeaderField: name)?.trimmingASCIIWhitespace())
        }
    }

    /// Why a stored response does not answer `request`, or `nil` when it does: every header its
    /// `Vary` named must have the same value, and the request must carry the same `Authorization`.
    static func mismatch(of entry: CachedResponse, with request: URLRequest) -> String? {
        for varying in entry.varyingRequestHeaders
        where request.value(forHTTPHeaderField: varying.name)?.trimmingASCIIWhitespace() != varying.value {
            return "the stored response varies on \(varying.name) and this request's value differs"
        }
        if authorizationFingerprint(of: request) != entry.authorizationFingerprint {
            return "the stored response belongs to other credentials"
        }
        return nil
    }

    /// The SHA-256 of the request's `Authorization` value, or `nil` without one.
    static func authorizationFingerprint(of request: URLRequest) -> String? {
        request.value(forHTTPHeaderField: "Authorization").map(SHA256.hexDigest)
    }

    /// The header fields of a response as they are stored: without connection-level fields.
    static func storedHeaders(of response: ResponseHead) -> [String: String] {
        response.fields.combined.filter { !connectionHeaders.contains($0.key.lowercased()) }
    }

    /// The stored fields updated by a 304's fields, except those that describe the stored body.
    static func merge(_ stored: [String: String], with update: [String: String]) -> [String: String] {
        var merged = stored
        for (name, value) in update {
            let lowered = name.lowercased()
            guard !connectionHeaders.contains(lowered), !bodyHeaders.contains(lowered) else { continue }
            for existing in merged.keys where existing.equalsIgnoringASCIICase(name) { merged[existing] = nil }
            merged[name] = value
        }
        return merged
    }

    /// Whether a 304 confirms `entry`: when both carry an ETag, they must match (weak comparison).
    static func notModified(_ response: ResponseHead, confirms entry: CachedResponse) -> Bool {
        guard let confirmed = response.fields["ETag"], let stored = entry.eTag else { return true }
        return opaqueTag(confirmed) == opaqueTag(stored)
    }

    private static func opaqueTag(_ tag: String) -> String {
        let trimmed = tag.trimmingASCIIWhitespace()
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }

    /// Whether `method` changes the resource, so a success must invalidate stored responses (RFC 9111 §4.4).
    static func isUnsafe(_ method: String) -> Bool {
        !["GET", "HEAD", "OPTIONS", "TRACE"].contains(method)
    }
}
