import Foundation

/// The body of a request: bytes in memory or a file streamed from disk, with its content type.
public struct RequestBody: Sendable {
    /// Where the bytes are.
    enum Content: Sendable {
        /// Bytes in memory, sent as the request's `httpBody`.
        case data(Data)
        /// A file streamed from disk. `removeWhenDone` deletes it after the run (a staged temporary file).
        case file(URL, removeWhenDone: Bool)
    }

    /// Where the bytes are: set by the initializer used.
    var content: Content
    /// The `Content-Type` header sent with the body, such as `application/json`.
    public var contentType: String?
    /// The `Content-Encoding` header sent with the body, such as `gzip`; `nil` for bytes as they are.
    public var contentEncoding: String?

    /// Creates a body from bytes in memory.
    public init(data: Data, contentType: String?, contentEncoding: String? = nil) {
        self.content = .data(data)
        self.contentType = contentType
        self.contentEncoding = contentEncoding
    }

    /// Creates a body streamed from a file.
    public init(file: URL, contentType: String?, removeWhenDone: Bool = false, contentEncoding: String? = nil) {
        self.content = .file(file, removeWhenDone: removeWhenDone)
        self.contentType = contentType
        self.contentEncoding = contentEncoding
    }
}
