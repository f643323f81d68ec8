import Foundation

/// Which values echo output and recordings hide. Names compare case-insensitively.
///
/// The standard policy hides credentials wherever they usually travel: `Authorization`,
/// `Proxy-Authorization`, `Cookie`, `Set-Cookie`, API-key and token headers, query parameters
/// such as `api_key` and `token`, and JSON fields such as `password`, `access_token` and
/// `Authorization` (servers that echo request headers put them in their bodies).
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

    /// Creates a policy; names are matched case-insensitively.
    public init(headerNames: Set<String>, headerFragments: [String], queryNames: Set<String>, jsonKeys: Set<String>) {
        self.headerNames = Set(headerNames.map { $0.lowercased() })
        self.headerFragments = headerFragments.map { $0.lowercased() }
        self.queryNames = Set(queryNames.map { $0.lowercased() })
        self.jsonKeys = Set(jsonKeys.map { $0.lowercased() })
    }

    /// Hides credentials in headers, query parameters and JSON bodies.
    public static let standard = Redaction(
        headerNames: ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "apikey"],
        headerFragments: ["token", "secret", "api-key", "api_key", "apikey", "password", "session"],
        queryNames: ["api_key", "apikey", "api-key", "key", "token", "access_token", "refresh_token", "id_token",
                     "password", "secret", "client_secret", "signature", "sig", "auth"],
        jsonKeys: ["password", "token", "access_token", "accesstoken", "refresh_token", "refreshtoken", "id_token",
                   "secret", "client_secret", "api_key", "apikey", "authorization", "cookie", "set-cookie", "x-api-key"])

    /// Hides nothing. Use only where the output never leaves the developer's machine.
    public static let none = Redaction(headerNames: [], headerFragments: [], queryNames: [], jsonKeys: [])

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

extension Redaction {
    /// The URL as text with the values of hidden query parameters replaced by `mask`, as echo
    /// output and recordings show it.
    public func maskedURL(_ url: URL) -> String {
        let text = url.absoluteString
        guard let queryStart = text.firstIndex(of: "?") else { return text }
        let fragmentStart = text[queryStart...].firstIndex(of: "#") ?? text.endIndex
        let query = String(text[text.index(after: queryStart)..<fragmentStart])
        return String(text[...queryStart]) + maskedPairs(query) + String(text[fragmentStart...])
    }

    /// The header fields with the values of hidden headers replaced by `mask`.
    public func maskedHeaders(_ headers: [String: String]) -> [String: String] {
        headers.reduce(into: [:]) { result, field in
            result[field.key] = hidesHeader(field.key) ? Self.mask : field.value
        }
    }

    /// The fields, in order, with the values of hidden headers replaced by `mask`.
    public func maskedFields(_ fields: HeaderFields) -> HeaderFields {
        HeaderFields(fields.map { hidesHeader($0.name) ? Header(name: $0.name, value: Self.mask) : $0 })
    }

    /// `a=1&token=‹redacted›` from `a=1&token=abc`: a query string or form body with hidden values masked.
    func maskedPairs(_ pairs: String) -> String {
        pairs.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = String(pair[..<equals])
            let decodedName = name.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? name
            return hidesQueryParameter(decodedName) ? name + "=" + Self.mask : String(pair)
        }.joined(separator: "&")
    }
}
