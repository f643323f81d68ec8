import Foundation

/// What a HAR export hides: everything the one masking rule (`Redaction`) hides in echo and
/// records, unless the export was explicitly asked to keep credentials (`redaction == nil`).
struct HARPrivacy: Sendable {
    /// The rule applied, or `nil` when credentials are kept.
    let redaction: Redaction?

    /// What the log's `comment` says about a file written with credentials kept.
    static let secretsKeptComment = "This file holds credentials: Convey wrote it with secrets kept (includingSecrets). Do not share it."

    /// A URL as text: userinfo and hidden query values masked.
    func url(_ url: URL) -> String {
        redaction?.maskedURL(url) ?? url.absoluteString
    }

    /// Free text (an error message, a URL stored as text) with the rule applied.
    func text(_ text: String) -> String {
        redaction?.maskedText(text) ?? text
    }

    /// Header fields in order, repeats kept, hidden values masked.
    func fields(_ fields: Headers) -> [HAREntry.Pair] {
        (redaction?.maskedFields(fields) ?? fields).map { ($0.name, $0.value) }
    }

    /// The cookies of a request's `Cookie` fields; their values masked when the rule hides `Cookie`.
    func requestCookies(_ fields: Headers) -> [HAREntry.Cookie] {
        let hidden = redaction?.hidesHeader("Cookie") ?? false
        // A line masked whole (a record's) names no cookie.
        return fields.values(named: "Cookie").filter { $0 != Redaction.mask }.flatMap { line in
            line.split(separator: ";").compactMap { pair -> HAREntry.Cookie? in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = parts[0].trimmingCharacters(in: .whitespaces)
                guard !name.isEmpty else { return nil }
                let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
                return HAREntry.Cookie(name: name, value: hidden ? Redaction.mask : value)
            }
        }
    }

    /// The cookies a response's `Set-Cookie` fields set, with their attributes; values masked
    /// when the rule hides `Set-Cookie`.
    func responseCookies(_ fields: Headers) -> [HAREntry.Cookie] {
        let hidden = redaction?.hidesHeader("Set-Cookie") ?? false
        return fields.values(named: "Set-Cookie").compactMap { line in
            let attributes = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = attributes.first, let equals = first.firstIndex(of: "="), equals != first.startIndex else { return nil }
            var cookie = HAREntry.Cookie(name: String(first[..<equals]),
                                         value: hidden ? Redaction.mask : String(first[first.index(after: equals)...]))
            for attribute in attributes.dropFirst() {
                let parts = attribute.split(separator: "=", maxSplits: 1).map(String.init)
                let value = parts.count > 1 ? parts[1] : ""
                switch parts[0].lowercased() {
                case "path": cookie.path = value
                case "domain": cookie.domain = value
                case "expires": cookie.expires = HTTPDate.parse(value).map(HARDate.text(for:))
                case "httponly": cookie.httpOnly = true
                case "secure": cookie.secure = true
                default: break
                }
            }
            return cookie
        }
    }

    /// A body as HAR holds it: text when it is UTF-8 without NUL (masked when the rule hides
    /// something in it: JSON then comes out as echo shows it, pretty-printed with sorted keys),
    /// otherwise its bytes in base64, which no rule can mask.
    func body(_ data: Data, contentType: String?) -> (text: String, isBase64: Bool) {
        guard let text = String(data: data, encoding: .utf8), !text.contains("\0") else {
            return (data.base64EncodedString(), true)
        }
        guard let redaction else { return (text, false) }
        // Rendering alone (JSON pretty-printed) is no reason to change a body, only a hidden value;
        // asking first also spares rendering JSON that holds nothing to hide, most of it.
        if let object = Self.json(data, contentType: contentType), !Self.hidesSomething(in: object, redaction) { return (text, false) }
        return (redaction.maskedBody(data, contentType: contentType) ?? text, false)
    }

    /// The body as `JSONSerialization` reads it, when `Redaction.maskedBody` would read it as JSON.
    private static func json(_ data: Data, contentType: String?) -> Any? {
        let first = data.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
        guard contentType?.lowercased().contains("json") == true || first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return nil }
        return try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    }

    /// Whether the rule would mask anything in a JSON value: a hidden key, or a string it masks.
    private static func hidesSomething(in object: Any, _ redaction: Redaction) -> Bool {
        if let dictionary = object as? [String: Any] {
            return dictionary.contains { redaction.hidesJSONKey($0.key) || hidesSomething(in: $0.value, redaction) }
        }
        if let array = object as? [Any] { return array.contains { hidesSomething(in: $0, redaction) } }
        if let string = object as? String { return redaction.maskedText(string) != string }
        return false
    }

    /// Query parameters of a URL written as text, in order, repeats kept, percent-decoded.
    static func queryPairs(ofURL text: String) -> [HAREntry.Pair] {
        guard let question = text.firstIndex(of: "?") else { return [] }
        let query = text[text.index(after: question)...].prefix { $0 != "#" }
        guard !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (part: Substring) in String(part).removingPercentEncoding ?? String(part) }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}
