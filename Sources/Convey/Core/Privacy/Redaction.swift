import Foundation

/// Which values Convey hides in every text it produces: echo output, recordings, error
/// descriptions and tools such as the harness. Names compare case-insensitively.
///
/// The standard policy hides credentials wherever they usually travel: `Authorization`,
/// `Proxy-Authorization`, `Cookie`, `Set-Cookie`, API-key and token headers, the user and
/// password of a URL (`https://‹redacted›@host/`), query parameters such as `api_key` and `token`,
/// and JSON fields such as `password`, `access_token` and `Authorization` (servers that echo
/// request headers put them in their bodies). Error descriptions always use the standard policy.
public struct Redaction: Sendable, Hashable {
    /// What replaces a hidden value.
    public static let mask = "‹redacted›"

    /// Header names whose values are hidden. A name containing any of `headerFragments` is hidden too.
    public var headerNames: Set<String>
    /// Parts of header names that mark a secret, such as "token" in `X-Auth-Token`.
    public var headerFragments: [String]
    /// Query parameter names whose values are hidden.
    public var queryNames: Set<String>
    /// JSON object keys whose values are hidden, at any depth.
    public var jsonKeys: Set<String>
    /// Whether the user and password of a URL (`https://user:pass@host/`) are hidden: the whole
    /// userinfo becomes `mask`, since a user name alone is often a token.
    public var hidesURLUserInfo: Bool

    /// Creates a policy; names are matched case-insensitively.
    public init(headerNames: Set<String>, headerFragments: [String], queryNames: Set<String>, jsonKeys: Set<String>,
                hidesURLUserInfo: Bool = true) {
        self.headerNames = Set(headerNames.map { $0.lowercased() })
        self.headerFragments = headerFragments.map { $0.lowercased() }
        self.queryNames = Set(queryNames.map { $0.lowercased() })
        self.jsonKeys = Set(jsonKeys.map { $0.lowercased() })
        self.hidesURLUserInfo = hidesURLUserInfo
    }

    /// Hides credentials in headers, URLs, query parameters and JSON bodies.
    public static let standard = Redaction(
        headerNames: ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "apikey"],
        headerFragments: ["token", "secret", "api-key", "api_key", "apikey", "password", "session"],
        queryNames: ["api_key", "apikey", "api-key", "key", "token", "access_token", "refresh_token", "id_token",
                     "password", "secret", "client_secret", "signature", "sig", "auth"],
        jsonKeys: ["password", "token", "access_token", "accesstoken", "refresh_token", "refreshtoken", "id_token",
                   "secret", "client_secret", "api_key", "apikey", "authorization", "cookie", "set-cookie", "x-api-key"])

    /// Hides nothing. Use only where the output never leaves the developer's machine.
    public static let none = Redaction(headerNames: [], headerFragments: [], queryNames: [], jsonKeys: [], hidesURLUserInfo: false)

    /// Whether a header's value is hidden.
    public func hidesHeader(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return headerNames.contains(lowered) || headerFragments.contains { lowered.contains($0) }
    }

    /// Whether a query parameter's value is hidden.
    public func hidesQueryParameter(_ name: String) -> Bool { queryNames.contains(name.lowercased()) }

    /// Whether a JSON field's value is hidden.
    public func hidesJSONKey(_ name: String) -> Bool { jsonKeys.contains(name.lowercased()) }
}

