import Foundation

/// How Convey writes durations, sizes and JSON for people: the forms echo uses, public so that
/// an app's own logs and tools (such as the harness) read the same.
public enum DisplayFormat {
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
}
