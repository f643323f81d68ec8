import Foundation

/// A `multipart/form-data` body (RFC 7578): an ordered list of parts.
public struct MIMEPayload: Sendable {
    /// The parts, in the order they are sent.
    public var parts: [MIMEPart]
    /// The boundary between parts: random, at most 70 characters, and checked not to occur in any part.
    public let boundary: String

    /// Creates a payload from parts.
    public init(parts: [MIMEPart]) {
        self.parts = parts
        var boundary = Self.randomBoundary()
        while parts.contains(where: { $0.contains(boundary) }) { boundary = Self.randomBoundary() }
        self.boundary = boundary
    }

    /// `multipart/form-data; boundary=…`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The body with exact CRLF framing.
    func encoded() throws -> Data {
        var body = Data()
        for part in parts {
            body.append(Data("--\(boundary)\r\n".utf8))
            body.append(Data(part.headerBlock.utf8))
            body.append(part.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return body
    }

    private static func randomBoundary() -> String {
        "convey-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }
}

/// One part of a multipart body: a form field or a file.
public struct MIMEPart: Sendable {
    /// The form field name.
    public var name: String
    /// The part's bytes.
    public var data: Data
    /// The file name, for file parts.
    public var filename: String?
    /// The part's `Content-Type`.
    public var mimeType: String

    /// A file or binary part.
    public init(name: String, data: Data, filename: String? = nil, mimeType: String = "application/octet-stream") {
        self.name = name
        self.data = data
        self.filename = filename
        self.mimeType = mimeType
    }

    /// A text field, sent as UTF-8.
    public init(name: String, stringValue: String) {
        self.init(name: name, data: Data(stringValue.utf8), filename: nil, mimeType: "text/plain; charset=utf-8")
    }

    /// The part's headers and the blank line before its bytes.
    var headerBlock: String {
        var disposition = "form-data; name=\"\(Self.quoted(name))\""
        if let filename { disposition += "; filename=\"\(Self.quoted(filename))\"" }
        return "Content-Disposition: \(disposition)\r\nContent-Type: \(mimeType)\r\n\r\n"
    }

    func contains(_ boundary: String) -> Bool {
        data.range(of: Data(boundary.utf8)) != nil || headerBlock.contains(boundary)
    }

    /// A quoted-string body per the HTML form-submission rules: `"`, CR and LF are percent-encoded.
    private static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22")
            .replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }
}
