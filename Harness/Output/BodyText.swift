import Foundation

/// How a body is shown when it is not JSON (`DisplayFormat.prettyJSON` shows that): text as is, binary as a size.
enum BodyText {
    /// The body as text, or `nil` when it is binary.
    static func text(_ body: Data) -> String? {
        guard let text = String(data: body, encoding: .utf8), !text.contains("\0") else { return nil }
        return text
    }
}
