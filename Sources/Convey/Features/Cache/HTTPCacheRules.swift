import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 9111's rules for a private cache: what may be stored, what a stored response must match,
/// and how a 304 updates it.
enum HTTPCacheRules {
    /// Statuses a response may be stored with even without explicit freshness (RFC 9110 §15.1).
    static let heuristicallyCacheableStatuses: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Statuses whose caching rules Convey implements: `must-understand` overrides `no-store` for
    /// these (RFC 9111 §5.2.2.3), never for a status it does not know.
    static let understoodStatuses: Set<Int> = heuristicallyCacheableStatuses.union(
        [201, 202, 205, 302, 303, 307, 400, 401, 403, 406, 408, 409, 411, 412, 413, 415, 416, 417, 421, 422, 426,
         500, 502, 503, 504, 505])

    /// Header fields never stored or replayed: they describe one connection, not the resource (RFC 9111 §3.1).
    private static let connectionHeaders: Set<String> = ["connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade"]

    /// Header fields never stored or replayed because they hand a credential to whoever receives
    /// them: a replayed `Set-Cookie` would give every later caller in the partition (all anonymous
    /// callers, in a backend) the session of the first.
    private static let credentialSettingHeaders: Set<String> = ["set-cookie", "set-cookie2"]

    /// Header fields a 304 never replaces (RFC 9111 §3.2): they describe the stored body.
    private static let bodyHeaders: Set<String> = ["content-length", "content-encoding", "content-range"]

    /// Request headers whose values compare without case (RFC 9110 §12.5); the others keep their case.
    private static let caseInsensitiveVaryHeaders: Set<String> = ["accept", "accept-charset", "accept-encoding", "accept-language"]

    /// The cache directives of a request: its `Cache-Control`, or `Pragma: no-cache` when it has none.
    static func requestControl(_ request: OutgoingRequest) -> CacheControl {
        if let field = request.value(forHTTPHeaderField: "Cache-Control") { return CacheControl(field) }
        var control = CacheControl(nil)
        control.noCache = request.value(forHTTPHeaderField: "Pragma")?.lowercased().contains("no-cache") ?? false
        return control
    }

    /// Why a response to `request` may not be stored, or `nil` when it may (RFC 9111 §3).
    static func reasonNotToStore(request: OutgoingRequest, head: ResponseHead, requestControl: CacheControl) -> String? {
        let control = CacheControl(head.fields["Cache-Control"])
        let status = head.statusCode
        // §5.2.2.3: must-understand with an understood status wins over no-store.
        let understood = control.mustUnderstand && understoodStatuses.contains(status)
        if control.mustUnderstand, !understood { return "must-understand with status \(status), which Convey does not implement" }
        if requestControl.noStore || (control.noStore && !understood) { return "no-store" }
        if status == 206 || status == 304 || !(200..<600).contains(status) { return "status \(status) is not storable" }
        let explicitFreshness = control.maxAge != nil || head.fields.contains(named: "Expires") || control.explicitlyCacheable
        if !heuristicallyCacheableStatuses.contains(status), !explicitFreshness { return "status \(status) without explicit freshness" }
        if let vary = head.fields["Vary"], vary.contains("*") { return "Vary: *" }
        if CacheKey.key(for: request.url, method: .get) != CacheKey.key(for: head.url, method: .get) {
            return "the response came through a redirect"
        }
        return nil
    }

    /// The request header values a response's `Vary` names, normalised, to store beside it.
    static func varyingHeaders(vary: String?, request: OutgoingRequest) -> [CachedResponse.VaryingHeader] {
        guard let vary else { return [] }
        let names = Set(vary.split(separator: ",").map { String($0).trimmingASCIIWhitespace().lowercased() }.filter { !$0.isEmpty })
        return names.sorted().map { name in
            CachedResponse.VaryingHeader(name: name, value: request.value(forHTTPHeaderField: name).map { normalisedVaryValue($0, name: name) })
        }
    }

    /// A request header value as `Vary` matching compares it (RFC 9111 §4.1 allows normalising):
    /// list members trimmed and joined with `", "`, runs of whitespace inside them made one space,
    /// lowercased for the `Accept` family, and the members of `Accept-Language` sorted, so the same
    /// languages in another order match.
    static func normalisedVaryValue(_ value: String, name: String) -> String {
        var members = value.split(separator: ",").map { member in
            member.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        }.filter { !$0.isEmpty }
        if caseInsensitiveVaryHeaders.contains(name) { members = members.map { $0.lowercased() } }
        if name == "accept-language" { members.sort() }
        return members.joined(separator: ", ")
    }

    /// Why a stored response does not answer `request`, or `nil` when it does: every header its
    /// `Vary` named must have the same normalised value, and the request must be in the partition
    /// the response was stored for (its key already says so; this checks the entry itself).
    static func mismatch(of entry: CachedResponse, with request: OutgoingRequest, in partition: CredentialPartition) -> String? {
        for varying in entry.varyingRequestHeaders
        where request.value(forHTTPHeaderField: varying.name).map({ normalisedVaryValue($0, name: varying.name) }) != varying.value {
            return "the stored response varies on \(varying.name) and this request's value differs"
        }
        if partition.tag != entry.credentialPartition {
            return "the stored response belongs to other credentials"
        }
        return nil
    }

    /// The request's values for the headers `entry` varies on, to find the variant stored for them.
    static func requestVariant(of entry: CachedResponse, for request: OutgoingRequest) -> [CachedResponse.VaryingHeader] {
        entry.varyingRequestHeaders.map { varying in
            CachedResponse.VaryingHeader(name: varying.name, value: request.value(forHTTPHeaderField: varying.name)
                .map { normalisedVaryValue($0, name: varying.name) })
        }
    }

    /// Whether `entry` was stored for `partition`, so another `Vary` variant of it may answer.
    static func isStored(_ entry: CachedResponse, for partition: CredentialPartition) -> Bool {
        entry.credentialPartition == partition.tag
    }

    /// The fields that name one connection: the fixed hop-by-hop set and every field `Connection`
    /// lists (RFC 9111 §3.1), lowercased.
    private static func connectionFields(in fields: Headers) -> Set<String> {
        var names = connectionHeaders
        for value in fields.values(named: "Connection") {
            for name in value.split(separator: ",") { names.insert(String(name).trimmingASCIIWhitespace().lowercased()) }
        }
        return names
    }

    /// The header fields of a response as they are stored, in order: without connection-level
    /// fields (§3.1), without the fields a qualified `no-cache` names (§5.2.2.4), and without
    /// `Set-Cookie`.
    static func storedFields(of fields: Headers) -> Headers {
        var dropped = connectionFields(in: fields).union(credentialSettingHeaders)
        dropped.formUnion(CacheControl(fields["Cache-Control"]).noCacheFields)
        return Headers(lines: fields.filter { !dropped.contains($0.name.lowercased()) })
    }

    /// The stored fields updated by a 304's fields (§3.2), except those that describe the stored
    /// body or one connection: each name the 304 carries replaces every stored line of that name.
    static func merge(_ stored: Headers, with update: Headers) -> Headers {
        let kept = storedFields(of: update).filter { !bodyHeaders.contains($0.name.lowercased()) }
        let replacedNames = Set(kept.map { $0.name.lowercased() })
        var merged = Headers(lines: stored.filter { !replacedNames.contains($0.name.lowercased()) })
        for field in kept { merged.appendLine(field) }
        return merged
    }

    /// Whether a 304 confirms `entry`: when both carry an ETag, they must match (weak comparison).
    static func notModified(_ head: ResponseHead, confirms entry: CachedResponse) -> Bool {
        guard let confirmed = head.fields.first(named: "ETag"), let stored = entry.eTag else { return true }
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
