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
        block.withUnsafeBufferPointer { block in
            var lineStart = block.firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? block.count
            while lineStart < block.count {
                let newline = block[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? block.count
                defer { lineStart = newline + 1 }
                let line = trimmed(block, lineStart, newline)
                guard !line.isEmpty else { continue }
                if isBlank(block[lineStart]) {
                    if !values.isEmpty { values[values.count - 1] += " " + text(block, line) }
                    continue
                }
                guard let colon = block[line].firstIndex(of: UInt8(ascii: ":")) else { continue }
                let nameRange = trimmed(block, line.lowerBound, colon)
                guard !nameRange.isEmpty else { continue }
                let name = text(block, nameRange)
                let value = text(block, trimmed(block, colon + 1, line.upperBound))
                if let index = names.firstIndex(where: { CurlHeaderName.matches($0, name) }) {
                    values[index] += ", " + value
                } else {
                    names.append(name)
                    values.append(value)
                }
            }
        }
        var fields = [String: String](minimumCapacity: names.count)
        for (name, value) in zip(names, values) { fields[name] = value }
        return fields
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

    /// `start..<end` without the spaces, tabs and carriage return at either end.
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Range<Int> {
        var lower = start
        var upper = end
        while lower < upper, isBlank(bytes[lower]) { lower += 1 }
        while upper > lower, isBlank(bytes[upper - 1]) || bytes[upper - 1] == UInt8(ascii: "\r") { upper -= 1 }
        return lower..<upper
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
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
