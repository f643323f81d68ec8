import Foundation

/// Writes a `multipart/form-data` body (RFC 2046 §5.1, RFC 7578) with exact CRLF framing:
/// in memory when it is small and every part is in memory; otherwise into a staged file, in
/// chunks, so that no file part is ever held whole in memory. Gzipped when `compression` applies.
struct MultipartEncoder: Sendable {
    /// Bodies at least this large are staged even when every part is in memory, so that the
    /// encoded copy does not sit in memory beside the parts: 4 MiB.
    static let stagingThreshold: Int64 = 4 << 20
    /// How many boundaries are tried before giving up on content that contains each of them.
    static let boundaryAttempts = 8

    /// The parts, in order.
    var parts: [MIMEPart]
    /// Whether the body is gzipped.
    var compression: UploadCompression
    /// Where a staged body goes.
    var stagingDirectory: URL
    /// Makes candidate boundaries; each is checked against the content before it is used.
    var makeBoundary: @Sendable () -> String = MultipartBoundary.random

    /// The body, with its `Content-Type` naming the boundary. Runs off the actor.
    @concurrent
    func requestBody() async throws -> RequestBody {
        guard !parts.isEmpty else { throw ConveyError.upload("the multipart body", "it has no parts; RFC 2046 requires at least one") }
        let prepared = try parts.map(PreparedPart.init)
        for _ in 0..<Self.boundaryAttempts {
            let boundary = makeBoundary()
            guard !prepared.contains(where: { $0.inMemoryBytesContain(boundary) }) else { continue }
            let length = prepared.reduce(Int64(boundary.utf8.count + 6)) { $0 + $1.framedLength(boundaryLength: boundary.utf8.count) }
            let gzip = compression.applies(toSize: length)
            let contentType = "multipart/form-data; boundary=\(boundary)"
            let contentEncoding = gzip ? UploadCompression.gzipEncoding : nil
            guard length >= Self.stagingThreshold || prepared.contains(where: \.isFile) else {
                var memory = MemorySink()
                if gzip {
                    var sink = try GzipSink(into: memory)
                    try Self.write(prepared, boundary: boundary, to: &sink)
                    memory = sink.destination
                } else {
                    try Self.write(prepared, boundary: boundary, to: &memory)
                }
                return RequestBody(data: memory.data, contentType: contentType, contentEncoding: contentEncoding)
            }
            do {
                let file = try BodyStaging.stage(in: stagingDirectory) { file in
                    if gzip {
                        var sink = try GzipSink(into: file)
                        try Self.write(prepared, boundary: boundary, to: &sink)
                    } else {
                        try Self.write(prepared, boundary: boundary, to: &file)
                    }
                }
                return RequestBody(file: file, contentType: contentType, removeWhenDone: true, contentEncoding: contentEncoding)
            } catch is BoundaryCollision {
                continue
            }
        }
        throw ConveyError.upload("the multipart body", "each of \(Self.boundaryAttempts) random boundaries occurs in the parts' content")
    }

    /// `--boundary CRLF headers CRLF CRLF content CRLF` for each part, then `--boundary-- CRLF`.
    /// The CRLF after each part's content belongs to the next delimiter (RFC 2046 §5.1.1).
    private static func write<Sink: BodySink>(_ parts: [PreparedPart], boundary: String, to sink: inout Sink) throws {
        let delimiter = Data("--\(boundary)\r\n".utf8)
        for part in parts {
            try sink.write(delimiter)
            try sink.write(part.headers)
            switch part.content {
            case .data(let data):
                try sink.write(data)
            case .file(let file):
                var scanner = BoundaryScanner(boundary: boundary)
                try UploadFile.forEachChunk(of: file, subject: part.subject) { chunk in
                    if scanner.occurs(in: chunk) { throw BoundaryCollision() }
                    try sink.write(chunk)
                }
            }
            try sink.write(Data("\r\n".utf8))
            try Task.checkCancellation()
        }
        try sink.write(Data("--\(boundary)--\r\n".utf8))
        try sink.finish()
    }
}

/// A file part's content turned out to contain the boundary: start again with another.
private struct BoundaryCollision: Error {}

/// A part checked and ready to write: its header block, its content and its size.
private struct PreparedPart {
    let headers: Data
    let content: MIMEPart.Content
    let contentLength: Int64
    /// The part as errors name it.
    let subject: String

    init(_ part: MIMEPart) throws {
        var subject = "multipart part \"\(part.name)\""
        if case .file(let file) = part.content { subject += " (file \(file.path(percentEncoded: false)))" }
        self.subject = subject
        guard !part.mimeType.isEmpty, part.mimeType.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) else {
            throw ConveyError.upload(subject, "its MIME type \(part.mimeType.debugDescription) is empty or holds a line break, a control character or non-ASCII text")
        }
        var disposition = "form-data; name=\"\(Self.escaped(part.name))\""
        if let filename = part.filename { disposition += "; filename=\"\(Self.escaped(filename))\"" }
        try FieldValidation.check(name: "Content-Disposition", value: disposition, source: .multipartPart)
        headers = Data("Content-Disposition: \(disposition)\r\nContent-Type: \(part.mimeType)\r\n\r\n".utf8)
        content = part.content
        contentLength = switch part.content {
        case .data(let data): Int64(data.count)
        case .file(let file): try UploadFile.size(of: file, subject: subject)
        }
    }

    var isFile: Bool {
        if case .file = content { true } else { false }
    }

    /// The part's share of the body: delimiter line, headers, content and the CRLF after it.
    func framedLength(boundaryLength: Int) -> Int64 {
        Int64(boundaryLength + 4 + headers.count + 2) + contentLength
    }

    /// Whether the boundary occurs in the headers or in-memory content (files are checked as they are read).
    func inMemoryBytesContain(_ boundary: String) -> Bool {
        let needle = Data(boundary.utf8)
        if headers.range(of: needle) != nil { return true }
        if case .data(let data) = content { return data.range(of: needle) != nil }
        return false
    }

    /// A name or file name inside a quoted header parameter, escaped the way the HTML standard's
    /// multipart/form-data encoding does: `"` → `%22`, CR → `%0D`, LF → `%0A`; everything
    /// else, non-ASCII included, is sent as UTF-8.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// Multipart boundaries (RFC 2046 §5.1.1): how they are made, and how content is checked for one.
enum MultipartBoundary {
    /// `convey-` and 32 random hex digits: 39 characters (RFC 2046 allows 70), all of them
    /// allowed unquoted in a `Content-Type` parameter.
    @Sendable
    static func random() -> String {
        "convey-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }
}

/// Finds a boundary in content that arrives in chunks, including one split across two chunks.
struct BoundaryScanner {
    private let boundary: Data
    /// The end of the content seen so far, one byte shorter than the boundary.
    private var tail = Data()

    init(boundary: String) {
        self.boundary = Data(boundary.utf8)
    }

    /// Whether the boundary occurs in the content up to and including `chunk`.
    mutating func occurs(in chunk: Data) -> Bool {
        let keep = max(0, boundary.count - 1)
        var seam = tail
        seam.append(chunk.prefix(keep))
        if seam.range(of: boundary) != nil || chunk.range(of: boundary) != nil { return true }
        tail = Data(chunk.count >= keep ? chunk.suffix(keep) : seam.suffix(keep))
        return false
    }
}
