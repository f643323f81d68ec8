import Foundation

/// Percent-encoding for the parts of a URL Convey builds.
enum PercentEncoding {
    /// Encodes a query name or value: everything but RFC 3986 unreserved characters
    /// (`A–Z a–z 0–9 - . _ ~`) becomes `%XX` of its UTF-8 bytes, so `&`, `=`, `+`, `/`, `?`, `#`,
    /// `%` and spaces arrive as they were written.
    static func queryComponent(_ text: String) -> String {
        encode(text) { isUnreserved($0) }
    }

    /// The query string for parameters, sorted by name so a task always builds the same URL,
    /// then for `items` in their order, repeats kept; an item without a value is its name alone.
    static func query(_ parameters: [String: String], then items: [URLQueryItem] = []) -> String {
        let sorted = parameters.sorted { $0.key < $1.key }.map { queryComponent($0.key) + "=" + queryComponent($0.value) }
        let ordered = items.map { item in queryComponent(item.name) + (item.value.map { "=" + queryComponent($0) } ?? "") }
        return (sorted + ordered).joined(separator: "&")
    }

    /// Makes a task path safe for a URL while keeping its meaning: characters that may never
    /// appear in a URL (spaces, non-ASCII, `"<>\^`{|}`) are encoded; `/`, `?`, `&`, `=` and other
    /// delimiters are kept as written, and so is an existing `%XX` escape. A `%` that starts no
    /// escape is encoded as `%25`.
    static func path(_ text: String) -> String {
        // Most paths need nothing: the same string, with no copy.
        if !needsEncodingAsPath(text.utf8) { return text }
        let bytes = Array(text.utf8)
        var result = ""
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                let isEscape = index + 2 < bytes.count && isHexDigit(bytes[index + 1]) && isHexDigit(bytes[index + 2])
                result += isEscape ? "%" : "%25"
            } else if isAllowedInPath(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += hex(byte)
            }
            index += 1
        }
        return result
    }

    /// Whether `path` would change: a byte not allowed in a path, or a `%` that starts no escape.
    private static func needsEncodingAsPath(_ bytes: String.UTF8View) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                let first = bytes.index(after: index)
                guard first < bytes.endIndex, isHexDigit(bytes[first]) else { return true }
                let second = bytes.index(after: first)
                guard second < bytes.endIndex, isHexDigit(bytes[second]) else { return true }
            } else if !isAllowedInPath(byte) {
                return true
            }
            index = bytes.index(after: index)
        }
        return false
    }

    private static func encode(_ text: String, keeping keep: (UInt8) -> Bool) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if keep(byte) { result.unicodeScalars.append(Unicode.Scalar(byte)) } else { result += hex(byte) }
        }
        return result
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    private static func isAllowedInPath(_ byte: UInt8) -> Bool {
        guard byte > 0x20, byte < 0x7F else { return false }
        return !"\"<>\\^`{|}".utf8.contains(byte)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func hex(_ byte: UInt8) -> String {
        String(decoding: [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]], as: UTF8.self)
    }
}
