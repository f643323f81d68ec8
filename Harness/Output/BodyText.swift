import Foundation

/// How a body is shown: JSON pretty-printed, text as is, binary as a size.
enum BodyText {
    /// Pretty JSON (sorted keys) when the body parses as JSON, else `nil`.
    static func prettyJSON(_ body: Data) -> String? {
        guard let first = body.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }),
              first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
              let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        // JSONSerialization on Linux prints an empty object or array across lines.
        return String(decoding: data, as: UTF8.self)
            .replacingOccurrences(of: #"\{\s*\n\s*\}"#, with: "{}", options: .regularExpression)
            .replacingOccurrences(of: #"\[\s*\n\s*\]"#, with: "[]", options: .regularExpression)
    }

    /// The body as text, or `nil` when it is binary.
    static func text(_ body: Data) -> String? {
        guard let text = String(data: body, encoding: .utf8), !text.contains("\0") else { return nil }
        return text
    }
}
