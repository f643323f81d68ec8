import Foundation

/// A recorded body as a record file holds it, kept only when the recorder is asked to keep bodies:
/// read through `RecordedTask.requestBody` and `responseBody`.
struct RecordedBody: Codable, Sendable, Hashable {
    /// The body as text when it is UTF-8, with credential fields of JSON and form bodies masked.
    /// JSON is stored pretty-printed with sorted keys.
    var text: String?
    /// The body's bytes in base64 when it is not text.
    var base64: String?
    /// Whether the body was cut at the recorder's `bodyLimit`.
    var truncated: Bool

    /// Creates a recorded body.
    init(text: String?, base64: String?, truncated: Bool) {
        self.text = text
        self.base64 = base64
        self.truncated = truncated
    }

    /// The recorded bytes: the text as UTF-8, or the decoded base64.
    var data: Data? {
        if let text { return Data(text.utf8) }
        return base64.flatMap { Data(base64Encoded: $0) }
    }
}
