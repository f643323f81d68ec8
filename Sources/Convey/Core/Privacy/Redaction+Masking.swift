import Foundation

/// The masking rule every text Convey produces goes through: echo, recordings, error
/// descriptions, and tools built on the public API such as the harness.
extension Redaction {
    /// The URL as text with its userinfo (when `hidesURLUserInfo`) and the values of hidden query
    /// parameters replaced by `mask`: `https://‹redacted›@host/a?page=2&token=‹redacted›`.
    public func maskedURL(_ url: URL) -> String {
        String(decoding: maskingEncodedURLs(maskedURLBytes(Array(url.absoluteString.utf8)[...])), as: UTF8.self)
    }

    /// Free text (an error message, a body, a log line) with the same rule applied: every
    /// `scheme://` URL in it masked as `maskedURL(_:)` masks it (also written `:\/\/` as JSON
    /// escapes it, or percent-encoded as a query value, `https%3A%2F%2F…`, which comes out
    /// re-encoded when it held something to hide),
    /// hidden parameters written `name=value` anywhere, the values of hidden JSON fields written
    /// `"name": "value"` (also in JSON cut short), and lines `Name: value` of hidden headers.
    public func maskedText(_ text: String) -> String {
        // Every pattern below needs one of these: most strings (JSON values, say) have none.
        guard text.utf8.contains(where: { $0 == .colon || $0 == .equals || $0 == .quote || $0 == .percent }) else { return text }
        var bytes = Array(text.utf8)
        bytes = maskingURLs(bytes)
        bytes = maskingEncodedURLs(bytes)
        bytes = maskingPairs(bytes)
        bytes = maskingJSONFields(bytes)
        bytes = maskingHeaderLines(bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The fields, in order and with repeats kept, with the values of hidden headers replaced by
    /// `mask`, and URLs and parameters in the other values masked as `maskedText(_:)` masks them
    /// (a `Location` with a password, say).
    public func maskedFields(_ fields: Headers) -> Headers {
        Headers(lines: fields.map { Header(name: $0.name, value: maskedValue(of: $0)) })
    }

    /// A body as Convey shows it, or `nil` for binary data (not UTF-8, or holding NUL): JSON
    /// (by `contentType`, or text starting with `{` or `[`) pretty-printed with sorted keys, the
    /// values of hidden fields replaced by `mask` and every string value masked as
    /// `maskedText(_:)` masks it; a form body (`application/x-www-form-urlencoded`) with hidden
    /// parameters masked; other text through `maskedText(_:)`.
    public func maskedBody(_ body: Data, contentType: String?) -> String? {
        let type = contentType?.lowercased() ?? ""
        let first = body.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
        if type.contains("json") || first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
           let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
           let json = DisplayFormat.prettyJSON(object: maskedJSON(object)) {
            return json
        }
        guard let text = String(data: body, encoding: .utf8), !text.contains("\0") else { return nil }
        return type.contains("x-www-form-urlencoded") ? maskedPairs(text) : maskedText(text)
    }

    /// `a=1&token=‹redacted›` from `a=1&token=abc`: a query string or form body with hidden values masked.
    func maskedPairs(_ pairs: String) -> String {
        pairs.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = String(pair[..<equals])
            return hidesQueryParameter(Self.decodedName(name)) ? name + "=" + Self.mask : String(pair)
        }.joined(separator: "&")
    }

    /// One field's value, masked as `maskedFields(_:)` masks it.
    func maskedValue(of field: Header) -> String {
        hidesHeader(field.name) ? Self.mask : maskedText(field.value)
    }

    /// A JSON object from `JSONSerialization` with hidden fields masked and strings masked as text.
    private func maskedJSON(_ object: Any) -> Any {
        if let dictionary = object as? [String: Any] {
            var copy: [String: Any] = [:]
            for (key, value) in dictionary { copy[key] = hidesJSONKey(key) ? Self.mask : maskedJSON(value) }
            return copy
        }
        if let array = object as? [Any] { return array.map(maskedJSON) }
        if let string = object as? String { return maskedText(string) }
        return object
    }

    private static func decodedName(_ name: String) -> String {
        name.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? name
    }
}

// MARK: - Scanning UTF-8 text. Every cut falls on an ASCII byte, so the pieces stay valid UTF-8.

extension Redaction {
    private static let maskBytes = Array(mask.utf8)

    /// One URL, `scheme://` or `scheme:\/\/` and what follows: userinfo and hidden query values masked.
    private func maskedURLBytes(_ url: ArraySlice<UInt8>) -> [UInt8] {
        guard let separator = Self.schemeSeparator(in: url) else { return Array(url) }
        var result = Array(url[..<separator.upperBound])
        var rest = url[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == .slash || $0 == .question || $0 == .hash || $0 == .backslash } ?? rest.endIndex
        if hidesURLUserInfo, let at = rest[..<authorityEnd].lastIndex(of: .at) {
            result += Self.maskBytes
            rest = rest[at...]
        }
        guard let question = rest.firstIndex(of: .question) else { return result + rest }
        let queryEnd = rest[question...].firstIndex(of: .hash) ?? rest.endIndex
        result += rest[...question]
        result += Array(maskedPairs(String(decoding: rest[rest.index(after: question)..<queryEnd], as: UTF8.self)).utf8)
        return result + rest[queryEnd...]
    }

    /// Every percent-encoded URL (a query value such as `next=https%3A%2F%2Fu%3Ap%40h%2F`) masked.
    private func maskingEncodedURLs(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var copied = 0
        var index = 0
        while index < bytes.count {
            guard bytes[index] == .percent, bytes[index...].starts(with: Self.encodedSeparator, by: Self.sameASCIILetter) else {
                index += 1
                continue
            }
            var start = index
            while start > copied, Self.isSchemeByte(bytes[start - 1]) { start -= 1 }
            while start < index, !Self.isLetter(bytes[start]) { start += 1 }
            var end = index + Self.encodedSeparator.count
            guard start < index else {
                index = end
                continue
            }
            while end < bytes.count, !Self.endsPairValue(bytes[end]) { end += 1 }
            result += bytes[copied..<start]
            result += maskedEncodedURLBytes(bytes[start..<end])
            copied = end
            index = end
        }
        return result + bytes[copied...]
    }

    /// One percent-encoded URL masked: decoded, masked, and encoded again when it held something
    /// to hide, else left as it was.
    private func maskedEncodedURLBytes(_ url: ArraySlice<UInt8>) -> [UInt8] {
        let text = String(decoding: url, as: UTF8.self)
        guard let decoded = text.removingPercentEncoding else { return Array(url) }
        let masked = String(decoding: maskedURLBytes(Array(decoded.utf8)[...]), as: UTF8.self)
        guard masked != decoded else { return Array(url) }
        return Array((masked.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? masked).utf8)
    }

    /// `:` `/` `/` percent-encoded, as a URL inside a query value has it.
    private static let encodedSeparator = Array("%3A%2F%2F".utf8)
    /// RFC 3986 unreserved characters: what a re-encoded URL keeps as it is.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    private static func sameASCIILetter(_ first: UInt8, _ second: UInt8) -> Bool { first | 0x20 == second | 0x20 }

    /// Where `://` (or `:\/\/`) is in `bytes`.
    private static func schemeSeparator(in bytes: ArraySlice<UInt8>) -> Range<Int>? {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == .colon, let length = separatorLength(bytes, at: index) { return index..<(index + length) }
            index += 1
        }
        return nil
    }

    /// 3 for `://` at `index`, 5 for `:\/\/`, else `nil`.
    private static func separatorLength(_ bytes: ArraySlice<UInt8>, at index: Int) -> Int? {
        let plain: [UInt8] = [.colon, .slash, .slash]
        let escaped: [UInt8] = [.colon, .backslash, .slash, .backslash, .slash]
        if bytes[index...].starts(with: plain) { return plain.count }
        if bytes[index...].starts(with: escaped) { return escaped.count }
        return nil
    }

    private func maskingURLs(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var copied = 0
        var index = 0
        while index < bytes.count {
            guard bytes[index] == .colon, let length = Self.separatorLength(bytes[...], at: index) else {
                index += 1
                continue
            }
            var start = index
            while start > copied, Self.isSchemeByte(bytes[start - 1]) { start -= 1 }
            while start < index, !Self.isLetter(bytes[start]) { start += 1 }
            var end = index + length
            guard start < index else {
                index = end
                continue
            }
            while end < bytes.count, !Self.endsURL(bytes[end]) { end += 1 }
            result += bytes[copied..<start]
            result += maskedURLBytes(bytes[start..<end])
            copied = end
            index = end
        }
        return result + bytes[copied...]
    }

    /// `name=value` wherever it stands, for hidden parameter names.
    private func maskingPairs(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var copied = 0
        var index = 0
        while index < bytes.count {
            guard bytes[index] == .equals else {
                index += 1
                continue
            }
            var nameStart = index
            while nameStart > copied, Self.isNameByte(bytes[nameStart - 1]) { nameStart -= 1 }
            var end = index + 1
            while end < bytes.count, !Self.endsPairValue(bytes[end]) { end += 1 }
            if nameStart < index, hidesQueryParameter(Self.decodedName(String(decoding: bytes[nameStart..<index], as: UTF8.self))) {
                result += bytes[copied...index]
                result += Self.maskBytes
                copied = end
            }
            index = end
        }
        return result + bytes[copied...]
    }

    /// `"name": "value"` for hidden JSON keys; a value cut short is masked to the end.
    private func maskingJSONFields(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var copied = 0
        var index = 0
        while index < bytes.count {
            guard bytes[index] == .quote else {
                index += 1
                continue
            }
            guard let keyEnd = Self.stringEnd(bytes, from: index + 1) else { break }
            var next = Self.skippingSpaces(bytes, from: keyEnd + 1)
            guard next < bytes.count, bytes[next] == .colon else {
                index = keyEnd + 1
                continue
            }
            next = Self.skippingSpaces(bytes, from: next + 1)
            guard next < bytes.count, bytes[next] == .quote else {
                index = next
                continue
            }
            let valueEnd = Self.stringEnd(bytes, from: next + 1) ?? bytes.count
            if hidesJSONKey(String(decoding: bytes[(index + 1)..<keyEnd], as: UTF8.self)) {
                result += bytes[copied...next]
                result += Self.maskBytes
                copied = valueEnd
            }
            index = valueEnd + 1
        }
        return result + bytes[copied...]
    }

    /// Lines `Name: value` (leading blanks allowed) for hidden header names.
    private func maskingHeaderLines(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var copied = 0
        var lineStart = 0
        while lineStart < bytes.count {
            let lineEnd = bytes[lineStart...].firstIndex(of: .lineFeed) ?? bytes.count
            let nameStart = Self.skippingSpaces(bytes, from: lineStart)
            var nameEnd = nameStart
            while nameEnd < lineEnd, Self.isTokenByte(bytes[nameEnd]) { nameEnd += 1 }
            if nameEnd > nameStart, nameEnd < lineEnd, bytes[nameEnd] == .colon,
               hidesHeader(String(decoding: bytes[nameStart..<nameEnd], as: UTF8.self)) {
                let valueStart = Self.skippingSpaces(bytes, from: nameEnd + 1)
                let valueEnd = lineEnd > valueStart && bytes[lineEnd - 1] == .carriageReturn ? lineEnd - 1 : lineEnd
                if valueEnd > valueStart {
                    result += bytes[copied..<valueStart]
                    result += Self.maskBytes
                    copied = valueEnd
                }
            }
            lineStart = lineEnd + 1
        }
        return result + bytes[min(copied, bytes.count)...]
    }

    /// The index of the quote closing a JSON string whose text starts at `start`, escapes skipped.
    private static func stringEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            if bytes[index] == .backslash { index += 2; continue }
            if bytes[index] == .quote { return index }
            index += 1
        }
        return nil
    }

    private static func skippingSpaces(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count, bytes[index] == .space || bytes[index] == .tab { index += 1 }
        return index
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }
    /// A byte of a parameter name: letters, digits, `_ . - + %`.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "%")
    }
    /// A byte of an HTTP token (RFC 9110 §5.6.2), as header names are.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
    private static func isBreak(_ byte: UInt8) -> Bool {
        byte <= 0x20 || byte == 0x7F || byte == .quote || byte == UInt8(ascii: "'") || byte == UInt8(ascii: "<")
            || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "`")
    }
    private static func endsURL(_ byte: UInt8) -> Bool { isBreak(byte) || byte == .backslash }
    private static func endsPairValue(_ byte: UInt8) -> Bool {
        isBreak(byte) || byte == .backslash || byte == UInt8(ascii: "&") || byte == .hash || byte == UInt8(ascii: ";")
    }
}

extension UInt8 {
    fileprivate static let colon = UInt8(ascii: ":")
    fileprivate static let slash = UInt8(ascii: "/")
    fileprivate static let backslash = UInt8(ascii: "\\")
    fileprivate static let question = UInt8(ascii: "?")
    fileprivate static let hash = UInt8(ascii: "#")
    fileprivate static let at = UInt8(ascii: "@")
    fileprivate static let equals = UInt8(ascii: "=")
    fileprivate static let percent = UInt8(ascii: "%")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let tab = UInt8(ascii: "\t")
    fileprivate static let lineFeed = UInt8(ascii: "\n")
    fileprivate static let carriageReturn = UInt8(ascii: "\r")
}
