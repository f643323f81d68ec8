/// A request as replay matches it: method, origin and path exactly (after normalising), query
/// parameters as a list whose order does not count.
///
/// Read from the URL's text, not through `URL`, so that a URL a masked export wrote
/// (`https://‹redacted›@host/a?token=‹redacted›`) is read as written. Scheme and host compare
/// case-insensitively, a default port is the same as none, userinfo and fragment are ignored,
/// and percent-encoding is normalised (`%7e` is `~`, `%2f` is `%2F`), so two spellings of one
/// URL match.
struct HARRequestKey: Sendable, Hashable {
    /// `GET http://127.0.0.1:8080/users/42`: what an index of entries is keyed by.
    let target: String
    /// The query parameters, decoded (`+` read as a space), in the order written.
    let query: [QueryParameter]

    struct QueryParameter: Sendable, Hashable {
        let name: String
        let value: String
    }

    /// The key of a request, or `nil` for a URL that is not `http` or `https` with a host.
    /// Works on the text's UTF-8 bytes: it runs for every request replay answers.
    init?(method: String, url text: String) {
        let bytes = Array(text.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8) else { return nil }
        let scheme = String(decoding: bytes[..<colon].map(Self.lowercased), as: UTF8.self)
        guard scheme == "http" || scheme == "https" else { return nil }
        var rest = bytes[(colon + 3)...]
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) { authority = authority[(at + 1)...] }
        guard let origin = Self.origin(scheme: scheme, authority: authority) else { return nil }
        let afterAuthority = rest[authorityEnd...]
        let queryStart = afterAuthority.firstIndex(of: UInt8(ascii: "?"))
        let path = Self.normalizedPath(afterAuthority[..<(queryStart ?? afterAuthority.endIndex)])
        target = method.uppercased() + " " + origin + path
        query = queryStart.map { Self.parameters(afterAuthority[($0 + 1)...]) } ?? []
    }

    /// Whether a fixture's query (`self`) answers a request's: the same parameters in any order,
    /// a masked value (`‹redacted›`, what a masked export left) standing for any value.
    func queryAnswers(_ request: [QueryParameter]) -> Bool {
        Self.answers(expected: query, actual: request)
    }

    /// Whether `expected` parameters (a fixture's query or form body) answer `actual` ones, as
    /// `queryAnswers(_:)` decides.
    static func answers(expected: [QueryParameter], actual: [QueryParameter]) -> Bool {
        guard expected.count == actual.count else { return false }
        var unmatched = actual
        var wildcards: [String] = []
        for parameter in expected {
            if parameter.value == Redaction.mask {
                wildcards.append(parameter.name)
            } else if let index = unmatched.firstIndex(of: parameter) {
                unmatched.remove(at: index)
            } else {
                return false
            }
        }
        for name in wildcards {
            guard let index = unmatched.firstIndex(where: { $0.name == name }) else { return false }
            unmatched.remove(at: index)
        }
        return unmatched.isEmpty
    }

    /// `scheme://host[:port]`, host lowercased, a default port left out; `nil` without a host.
    private static func origin(scheme: String, authority: ArraySlice<UInt8>) -> String? {
        var host = authority
        var port: ArraySlice<UInt8> = []
        if let colon = authority.lastIndex(of: UInt8(ascii: ":")), !authority[colon...].contains(UInt8(ascii: "]")) {
            host = authority[..<colon]
            port = authority[(colon + 1)...]
        }
        guard !host.isEmpty else { return nil }
        let defaultPort = scheme == "https" ? "443" : "80"
        let portText = port.isEmpty || port.elementsEqual(defaultPort.utf8) ? "" : ":" + String(decoding: port, as: UTF8.self)
        return scheme + "://" + String(decoding: host.map(lowercased), as: UTF8.self) + portText
    }

    /// The path with percent-encoding normalised: unreserved characters decoded, other escapes in
    /// upper case; `/` for an empty path.
    private static func normalizedPath(_ path: ArraySlice<UInt8>) -> String {
        guard !path.isEmpty else { return "/" }
        var result: [UInt8] = []
        result.reserveCapacity(path.count)
        var index = path.startIndex
        while index < path.endIndex {
            if path[index] == UInt8(ascii: "%"), index + 2 < path.endIndex,
               let high = hexValue(path[index + 1]), let low = hexValue(path[index + 2]) {
                let decoded = high << 4 | low
                if isUnreserved(decoded) {
                    result.append(decoded)
                } else {
                    result += [UInt8(ascii: "%"), upperHex(high), upperHex(low)]
                }
                index += 3
            } else {
                result.append(path[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// `a=1&b=2` as parameters, in order: a query, or a form body.
    static func parameters(_ query: ArraySlice<UInt8>) -> [QueryParameter] {
        query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            return QueryParameter(name: decoded(parts[0]), value: parts.count > 1 ? decoded(parts[1]) : "")
        }
    }

    /// Form-style decoding: `+` is a space, then percent-escapes; text whose escapes do not make
    /// UTF-8 stays as written.
    private static func decoded(_ text: ArraySlice<UInt8>) -> String {
        var result: [UInt8] = []
        result.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            if byte == UInt8(ascii: "%"), index + 2 < text.endIndex, let high = hexValue(text[index + 1]), let low = hexValue(text[index + 2]) {
                result.append(high << 4 | low)
                index += 3
            } else {
                result.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return isValidUTF8(result) ? String(decoding: result, as: UTF8.self) : String(decoding: text, as: UTF8.self)
    }

    private static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func upperHex(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "-._~".utf8.contains(byte)
    }
}
