import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The opening handshake on a raw byte stream: the request's bytes, the answer's head, and the
/// body of an answer that is not a 101 (for the `HTTPError` it becomes).
enum WebSocketOpening {
    /// The most bytes of a refused handshake's body that are read for its `HTTPError`.
    static let refusedBodyLimit = 64 * 1024

    /// The opening request as HTTP/1.1 bytes: the request line, `Host` (unless a step set its
    /// own), then the request's fields in order. The request's fields were held to the field rules
    /// when it was built, so none can end a line early.
    static func head(of request: OutgoingRequest) -> [UInt8] {
        var target = request.url.path(percentEncoded: true)
        if target.isEmpty { target = "/" }
        if let query = request.url.query(percentEncoded: true) { target += "?" + query }
        var text = "\(request.method.rawValue) \(target) HTTP/1.1\r\n"
        if !request.fields.contains(named: "Host") { text += "Host: \(hostField(of: request.url))\r\n" }
        for field in request.fields { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// `Host`'s value for `url`: its host (an IPv6 address in brackets) and its port unless it is
    /// the scheme's default.
    static func hostField(of url: URL) -> String {
        var host = url.host(percentEncoded: true) ?? ""
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        let secure = ["https", "wss"].contains(url.scheme?.lowercased() ?? "")
        guard let port = url.port, port != (secure ? 443 : 80) else { return host }
        return "\(host):\(port)"
    }

    /// The body of an answer that is not a 101, as HTTP/1.1 frames it (RFC 9112 §6.3): none for
    /// 1xx, 204 and 304, chunked, `Content-Length` bytes, or up to the end of the connection; at
    /// most `limit` bytes, and what arrived when the connection breaks off.
    static func refusedBody(of head: ResponseHead, leftover: [UInt8], limit: Int = refusedBodyLimit,
                            read: () async throws -> [UInt8]?) async -> Data {
        let status = head.statusCode
        if (100..<200).contains(status) || status == 204 || status == 304 { return Data() }
        var reader = RefusedBodyReader(head: head, limit: limit)
        var input = leftover
        while true {
            if reader.take(input) { break }
            guard let next = try? await read() else { break }
            input = next
        }
        return reader.body
    }
}

/// Reads an HTTP/1.1 body framed by `Content-Length`, by chunks, or by the end of the connection,
/// up to a limit.
private struct RefusedBodyReader {
    private enum Framing {
        case length(Int)
        case chunked
        case untilEnd
    }

    private let framing: Framing
    private let limit: Int
    private(set) var body = Data()
    /// Chunked framing: bytes not parsed yet, and the data left in the current chunk.
    private var pending: [UInt8] = []
    private var chunkLeft = 0
    /// Chunked framing: the CRLF after a chunk's data is still to come.
    private var expectsChunkEnd = false

    init(head: ResponseHead, limit: Int) {
        self.limit = limit
        if head.value(forHTTPHeaderField: "Transfer-Encoding")?.lowercased().contains("chunked") == true {
            framing = .chunked
        } else if let length = head.value(forHTTPHeaderField: "Content-Length").flatMap({ Int($0.trimmingASCIIWhitespace()) }), length >= 0 {
            framing = .length(length)
        } else {
            framing = .untilEnd
        }
    }

    /// Takes `bytes`; `true` once the body is whole or the limit is reached.
    mutating func take(_ bytes: [UInt8]) -> Bool {
        switch framing {
        case .length(let length):
            body.append(contentsOf: bytes.prefix(min(length, limit) - body.count))
            return body.count >= min(length, limit)
        case .untilEnd:
            body.append(contentsOf: bytes.prefix(limit - body.count))
            return body.count >= limit
        case .chunked:
            pending += bytes
            return takeChunks()
        }
    }

    /// Parses as many chunks as `pending` holds; `true` at the last chunk or the limit.
    private mutating func takeChunks() -> Bool {
        var index = 0
        defer { pending.removeFirst(index) }
        while true {
            if chunkLeft > 0 {
                let count = min(chunkLeft, pending.count - index)
                body.append(contentsOf: pending[index..<(index + count)].prefix(limit - body.count))
                index += count
                chunkLeft -= count
                if body.count >= limit { return true }
                if chunkLeft > 0 { return false }
                expectsChunkEnd = true
            }
            guard let lineEnd = pending[index...].firstIndex(of: 0x0A) else { return false }
            let line = String(decoding: pending[index..<lineEnd], as: UTF8.self).trimmingASCIIWhitespace()
            index = lineEnd + 1
            if expectsChunkEnd {
                expectsChunkEnd = false
                continue
            }
            let size = line.split(separator: ";").first.flatMap { Int(String($0).trimmingASCIIWhitespace(), radix: 16) }
            guard let size, size > 0 else { return true }
            chunkLeft = size
        }
    }
}
