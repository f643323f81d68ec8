import Foundation

/// How Convey writes durations, sizes, JSON and text from servers for people: the forms echo
/// uses. Convey's SPI for its own tools (`@_spi(Tools) import Convey`), so that the harness
/// reads the same and escapes terminal controls by the same rule.
@_spi(Tools) public enum DisplayFormat {
    /// `12.3 ms` under a second, else `2.35 s`.
    public static func duration(_ duration: Duration) -> String {
        let seconds = duration.timeInterval
        return seconds < 1 ? String(format: "%.1f ms", seconds * 1000) : String(format: "%.2f s", seconds)
    }

    /// A byte count in powers of 1000: `312 B`, `1.5 KB`, `2.3 MB`, `1.1 GB`.
    public static func byteCount(_ count: some BinaryInteger) -> String {
        let value = Double(count)
        switch value {
        case ..<1000: return "\(count) B"
        case ..<1_000_000: return String(format: "%.1f KB", value / 1000)
        case ..<1_000_000_000: return String(format: "%.1f MB", value / 1_000_000)
        default: return String(format: "%.1f GB", value / 1_000_000_000)
        }
    }

    /// JSON text pretty-printed with sorted keys and unescaped slashes, or `nil` when `data` is
    /// not a JSON object or array. Empty objects and arrays stay on one line (`{}`, `[]`).
    public static func prettyJSON(_ data: Data) -> String? {
        guard let first = data.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }),
              first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
              let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        else { return nil }
        return prettyJSON(object: object)
    }

    /// A JSON object (from `JSONSerialization`) pretty-printed as `prettyJSON(_:)` does, or `nil`
    /// when it cannot be written as JSON.
    static func prettyJSON(object: Any) -> String? {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
        else { return nil }
        // JSONSerialization on Linux prints an empty object or array across lines.
        return String(decoding: data, as: UTF8.self)
            .replacingOccurrences(of: #"\{\s*\n\s*\}"#, with: "{}", options: .regularExpression)
            .replacingOccurrences(of: #"\[\s*\n\s*\]"#, with: "[]", options: .regularExpression)
    }

    /// Text from outside (a body, a header, an event, an error message) made safe to write to a
    /// terminal: every control character a terminal would act on is written as an escape such as
    /// `\u{1B}`, so that a server cannot set the window title, clear the screen or hide what it
    /// printed. Escaped: the C0 controls except line feed and tab, DEL, and the C1 controls
    /// U+0080–U+009F; a carriage return right before a line feed is dropped, so CRLF lines read as lines.
    public static func terminalSafe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isTerminalControl) else { return text }
        var result = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            guard isTerminalControl(scalar) else {
                result.append(scalar)
                continue
            }
            if scalar == "\r", index + 1 < scalars.count, scalars[index + 1] == "\n" { continue }
            result.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
        }
        return String(result)
    }

    /// JSON text made safe to write to a terminal as `terminalSafe(_:)` makes text safe, with JSON
    /// escapes (`\u001B`) so that it still parses to the same value. JSON writers escape C0
    /// controls in strings already, but not DEL or the C1 controls.
    public static func terminalSafeJSON(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: isTerminalControl) else { return json }
        var result = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            guard isTerminalControl(scalar) else {
                result.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            result.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
        }
        return String(result)
    }

    /// Whether a terminal acts on `scalar` instead of showing it (line feed and tab are kept).
    private static func isTerminalControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00...0x1F, 0x7F...0x9F: true
        default: false
        }
    }
}
