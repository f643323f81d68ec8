import Foundation
import Testing
@testable import Convey

@Suite("WebSocket response head reader")
struct WebSocketResponseHeadReaderTests {
    private let url = URL(string: "http://127.0.0.1/chat")!
    private let head = Array("""
        HTTP/1.1 101 Switching Protocols\r
        Upgrade: websocket\r
        Connection: Upgrade\r
        Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r
        X-Folded: one\r
         two\r
        \r

        """.utf8)

    @Test func aHeadFedOneByteAtATimeIsReadWithTheBytesAfterIt() throws {
        var reader = WebSocketResponseHeadReader(url: url)
        let frame: [UInt8] = [0x81, 0x02, 0x68, 0x69]
        var result: (head: ResponseHead, rest: [UInt8])?
        for byte in head + frame where result == nil {
            result = try reader.read([byte])
        }
        let read = try #require(result)
        #expect(read.head.statusCode == 101)
        #expect(read.head.httpVersion == "HTTP/1.1")
        #expect(read.head.value(forHTTPHeaderField: "sec-websocket-accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(read.head.value(forHTTPHeaderField: "X-Folded") == "one two")
        // Fed a byte at a time, the head ends at the blank line and nothing follows yet.
        #expect(read.rest == [])

        var whole = WebSocketResponseHeadReader(url: url)
        #expect(try whole.read(head + frame)?.rest == frame)
    }

    @Test func theHandshakeChecksAHeadReadFromBytes() throws {
        var reader = WebSocketResponseHeadReader(url: url)
        let read = try #require(try reader.read(head))
        let handshake = try WebSocketHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(try handshake.check(read.head) == .upgraded(WebSocketNegotiation(subprotocol: nil, extensions: [], deflate: nil)))
    }

    @Test func aHeadThatIsNotHTTPOrTooLargeFails() throws {
        var garbage = WebSocketResponseHeadReader(url: url)
        #expect(throws: WebSocketHandshakeError.malformedResponseHead("the status line is \"SSH-2.0-OpenSSH\"")) {
            try garbage.read(Array("SSH-2.0-OpenSSH\r\n\r\n".utf8))
        }
        var badField = WebSocketResponseHeadReader(url: url)
        #expect(throws: WebSocketHandshakeError.malformedResponseHead("a field line is \"no colon here\"")) {
            try badField.read(Array("HTTP/1.1 101 OK\r\nno colon here\r\n\r\n".utf8))
        }
        var endless = WebSocketResponseHeadReader(url: url, limit: 100)
        #expect(try endless.read(Array("HTTP/1.1 101 OK\r\n".utf8)) == nil)
        #expect(throws: WebSocketHandshakeError.responseHeadTooLarge(limit: 100)) {
            try endless.read([UInt8](repeating: 0x61, count: 100))
        }
    }
}
