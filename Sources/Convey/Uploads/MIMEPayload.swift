/// A `multipart/form-data` body (RFC 7578): fields and files, sent in order.
///
/// ```swift
/// MIMEPayload(parts: [
///     MIMEPart(name: "photo", fileURL: photoURL, mimeType: "image/jpeg"),
///     MIMEPart(name: "caption", stringValue: "At the beach"),
/// ])
/// ```
///
/// The boundary is chosen when the body is written: random, 39 characters, and checked not to
/// occur in any part (file parts are checked as they are read).
public struct MIMEPayload: Sendable {
    /// The parts, in the order they are sent. A body needs at least one.
    public var parts: [MIMEPart]

    /// Creates a payload from parts.
    public init(parts: [MIMEPart]) {
        self.parts = parts
    }
}
