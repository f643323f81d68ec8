#if canImport(CConveyCurlShim)
import CConveyCurlShim
import CCurl

/// Turns the raw header block curl delivers into the fields `HTTPURLResponse` takes.
enum CurlResponseHead {
    /// How every status line starts (`HTTP/1.1 200 OK`, `HTTP/2 200`): a new header block.
    static let statusLinePrefix = Array("HTTP/".utf8)

    /// The header fields of one block, status line skipped. Repeated fields are joined with
    /// `", "` as URLSession does; folded lines continue the field above; the first spelling of
    /// a name is kept.
    static func fields(in block: [UInt8]) -> [String: String] {
        var names: [String] = []
        var values: [String] = []
        var indexByLowercasedName: [String: Int] = [:]
        var lineStart = 0
        var isStatusLine = true
        while lineStart < block.count {
            var lineEnd = block[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? block.count
            let next = lineEnd + 1
            if lineEnd > lineStart, block[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            defer { lineStart = next }
            guard !isStatusLine else {
                isStatusLine = false
                continue
            }
            let line = block[lineStart..<lineEnd]
            guard let first = line.first else { continue }
            if first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
                if !values.isEmpty { values[values.count - 1] += " " + trimmed(line) }
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = trimmed(line[..<colon])
            guard !name.isEmpty else { continue }
            let value = trimmed(line[(colon + 1)...])
            let key = name.lowercased()
            if let index = indexByLowercasedName[key] {
                values[index] += ", " + value
            } else {
                indexByLowercasedName[key] = names.count
                names.append(name)
                values.append(value)
            }
        }
        return Dictionary(zip(names, values), uniquingKeysWith: { first, _ in first })
    }

    /// The version `HTTPURLResponse` reports, from `CURLINFO_HTTP_VERSION`.
    static func httpVersion(curlVersion: Int) -> String {
        switch curlVersion {
        case CURL_HTTP_VERSION_1_0: "HTTP/1.0"
        case CURL_HTTP_VERSION_2_0: "HTTP/2"
        case CURL_HTTP_VERSION_3: "HTTP/3"
        default: "HTTP/1.1"
        }
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> String {
        var slice = bytes
        while let first = slice.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { slice.removeFirst() }
        while let last = slice.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { slice.removeLast() }
        return String(decoding: slice, as: UTF8.self)
    }
}

/// Header names compared the way HTTP compares them: ASCII letters in any case.
enum CurlHeaderName {
    static func matches(_ name: String, _ other: String) -> Bool {
        name.utf8.count == other.utf8.count && zip(name.utf8, other.utf8).allSatisfy { lowered($0) == lowered($1) }
    }

    /// Removes the field called `name` (in any case) and returns its value.
    static func remove(_ name: String, from fields: inout [String: String]) -> String? {
        guard let key = fields.keys.first(where: { matches($0, name) }) else { return nil }
        return fields.removeValue(forKey: key)
    }

    private static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
#endif
