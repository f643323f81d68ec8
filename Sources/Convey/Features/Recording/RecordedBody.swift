import Foundation

/// A recorded body, kept only when the recorder is asked to keep bodies.
public struct RecordedBody: Codable, Sendable, Hashable {
    /// The body as text when it is UTF-8, with credential fields of JSON and form bodies masked.
    /// JSON is stored pretty-printed with sorted keys.
    public var text: String?
    /// The body's bytes in base64 when it is not text.
    public var base64: String?
    /// Whether the body was cut at the recorder's `bodyLimit`.
    public var truncated: Bool

    /// Creates a recorded body.
    public init(text: String?, base64: String?, truncated: Bool) {
        self.text = text
        self.base64 = base64
        self.truncated = truncated
    }

    /// The recorded bytes: the text as UTF-8, or the decoded base64.
    public var data: Data? {
        if let text { return Data(text.utf8) }
        return base64.flatMap { Data(base64Encoded: $0) }
    }
}
