import Foundation

/// Reads the server's answer to the opening handshake from a raw byte stream, fed in pieces of
/// any size: an HTTP/1.1 status line and fields up to the blank line (RFC 9112 §4–§5), bounded
/// in size. What follows the blank line already belongs to the WebSocket connection (a server
/// may send its first frame in the same packet as its 101) and is handed back untouched.
struct WebSocketResponseHeadReader {
    /// The largest head accepted by default, in bytes.
    static let defaultLimit = 64 * 1024

    /// The URL the head answers, which `ResponseHead` carries.
    let url: URL
    /// The largest head accepted, in bytes.
    let limit: Int
    private var buffer: [UInt8] = []

    /// A reader for the answer to a request for `url`.
    init(url: URL, limit: Int = Self.defaultLimit) {
        self.url = url
        self.limit = limit
    }

    /// Adds `bytes`; returns the head and the bytes after it once the blank line has arrived,
    /// `nil` while it has not. Throws when the head is not HTTP/1.1's or grows past `limit`.
    mutating func read(_ bytes: [UInt8]) throws(WebSocketHandshakeError) -> (head: ResponseHead, rest: [UInt8])? {
        let searchStart = max(0, buffer.count - 3)
        buffer += bytes
        guard let (headEnd, restStart) = Self.blankLine(in: buffer, from: searchStart) else {
            if buffer.count > limit { throw .responseHeadTooLarge(limit: limit) }
            return nil
        }
        guard headEnd <= limit else { throw .responseHeadTooLarge(limit: limit) }
        let head = try parse(buffer[..<headEnd])
        return (head, Array(buffer[restStart...]))
    }

    /// Where the head ends and what follows begins: at the first empty line (CRLF CRLF, or bare LFs).
    private static func blankLine(in bytes: [UInt8], from start: Int) -> (Int, Int)? {
        var index = start
        while index < bytes.count {
            if bytes[index] == 0x0A {
                if index + 1 < bytes.count, bytes[index + 1] == 0x0A { return (index, index + 2) }
                if index + 2 < bytes.count, bytes[index + 1] == 0x0D, bytes[index + 2] == 0x0A { return (index, index + 3) }
            }
            index += 1
        }
        return nil
    }

    private func parse(_ bytes: ArraySlice<UInt8>) throws(WebSocketHandshakeError) -> ResponseHead {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
        }
        // "HTTP/1.1 101 Switching Protocols": the version, a three-digit code, an optional reason.
        let statusParts = lines[0].split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), statusParts[1].count == 3,
              let statusCode = Int(statusParts[1]), statusCode >= 100 else {
            throw .malformedResponseHead("the status line is \"\(lines[0].prefix(100))\"")
        }
        var fields = Headers()
        for line in lines.dropFirst() {
            if line.first == " " || line.first == "\t" {
                // Obsolete line folding (RFC 9112 §5.2): the value goes on.
                fields.continueLastField(with: line.trimmingASCIIWhitespace())
                continue
            }
            guard let colon = line.firstIndex(of: ":"), WebSocketExtension.isToken(String(line[..<colon])) else {
                throw .malformedResponseHead("a field line is \"\(line.prefix(100))\"")
            }
            fields.appendLine(Header(name: String(line[..<colon]), value: String(line[line.index(after: colon)...]).trimmingASCIIWhitespace()))
        }
        return ResponseHead(statusCode: statusCode, httpVersion: String(statusParts[0]), fields: fields, url: url)
    }
}
