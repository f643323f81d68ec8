import Foundation

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

/// One part of a multipart body: a form field, bytes in memory, or a file streamed from disk.
public struct MIMEPart: Sendable {
    /// Where a part's bytes come from.
    enum Content: Sendable {
        /// Bytes in memory.
        case data(Data)
        /// A regular file, read in chunks when the body is written and never held whole in memory.
        case file(URL)
    }

    /// The form field name. Sent as UTF-8, with `"`, CR and LF written as `%22`, `%0D`, `%0A`
    /// (the HTML standard's rule), so any name is safe.
    public var name: String
    /// The part's bytes: set by the initializer used.
    var content: Content
    /// The file name sent with the part, escaped like `name`; `nil` sends none (a plain field).
    public var filename: String?
    /// The part's `Content-Type`. Must be non-empty ASCII without control characters.
    public var mimeType: String

    /// A part holding bytes in memory, such as a file already loaded.
    public init(name: String, data: Data, filename: String? = nil, mimeType: String = "application/octet-stream") {
        self.name = name
        self.content = .data(data)
        self.filename = filename
        self.mimeType = mimeType
    }

    /// A text field, sent as UTF-8 with `Content-Type: text/plain; charset=utf-8`.
    public init(name: String, stringValue: String) {
        self.init(name: name, data: Data(stringValue.utf8), mimeType: "text/plain; charset=utf-8")
    }

    /// A file streamed from disk. Its size and readability are checked before anything is sent.
    ///
    /// - Parameters:
    ///   - name: the form field's name.
    ///   - fileURL: the file whose bytes are sent.
    ///   - filename: the file name sent to the server; `nil` sends the file's own name.
    ///   - mimeType: the part's `Content-Type`.
    public init(name: String, fileURL: URL, filename: String? = nil, mimeType: String = "application/octet-stream") {
        self.name = name
        self.content = .file(fileURL)
        self.filename = filename ?? fileURL.lastPathComponent
        self.mimeType = mimeType
    }
}
