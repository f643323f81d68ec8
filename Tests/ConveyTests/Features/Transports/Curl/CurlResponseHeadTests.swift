#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Building a response head from the header lines curl delivers one at a time.
struct CurlResponseHeadTests {
    private let url = URL(fileURLWithPath: "/")

    /// Feeds `text` line by line, as curl does; returns the head of the last completed block.
    private func parse(_ text: String, limit: Int = 64 * 1024) throws -> ResponseHead {
        var parser = CurlResponseHead(maximumSize: limit)
        var line: [UInt8] = []
        for byte in Array(text.utf8) {
            line.append(byte)
            guard byte == UInt8(ascii: "\n") else { continue }
            _ = try line.withUnsafeBytes { try parser.consume($0) }
            line.removeAll()
        }
        return try parser.head(url: url)
    }

    @Test func theStatusLineGivesCodeAndVersionAndFieldsAreTrimmed() throws {
        let head = try parse("HTTP/1.1 404 Not Found\r\nContent-Type:  text/plain \r\nContent-Length: 5\r\n\r\n")
        #expect(head.statusCode == 404)
        #expect(head.httpVersion == "HTTP/1.1")
        #expect(Array(head.fields) == [Header(name: "Content-Type", value: "text/plain"), Header(name: "Content-Length", value: "5")])
    }

    @Test func repeatedFieldsStayApartInOrder() throws {
        let head = try parse("HTTP/2 200\r\nSet-Cookie: a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT\r\nAge: 7200\r\nset-cookie: b=2\r\nAge: 0\r\n\r\n")
        #expect(head.fields.values(named: "Set-Cookie") == ["a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT", "b=2"])
        #expect(head.fields.values(named: "age") == ["7200", "0"])
        #expect(head.fields["Age"] == "7200, 0")
        #expect(head.httpVersion == "HTTP/2")
    }

    @Test func foldedLinesContinueTheFieldAbove() throws {
        #expect(try parse("HTTP/1.1 200 OK\r\nX-Long: first\r\n  second\r\n\tthird\r\n\r\n").fields["X-Long"] == "first second third")
    }

    @Test func linesWithoutANameAreDropped() throws {
        let head = try parse("HTTP/1.1 200 OK\r\nno colon here\r\n: no name\r\nBad Name: x\r\nGood: yes\r\nEmpty:\r\n\r\n")
        #expect(Array(head.fields) == [Header(name: "Good", value: "yes"), Header(name: "Empty", value: "")])
    }

    @Test func bareLineFeedsWork() throws {
        #expect(try parse("HTTP/1.0 200 OK\nA: 1\nB: 2\n\n").fields.combined == ["A": "1", "B": "2"])
    }

    @Test func anInterimBlockIsReplacedByTheFinalOne() throws {
        let head = try parse("HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\nHTTP/1.1 201 Created\r\nLocation: /new\r\n\r\n")
        #expect(head.statusCode == 201)
        #expect(Array(head.fields) == [Header(name: "Location", value: "/new")])
    }

    @Test func aHeadOverTheLimitFailsAsTooLarge() {
        let fields = String(repeating: "X-Filler: 0123456789\r\n", count: 100)
        #expect(throws: CurlResponseHead.Failure.tooLarge(limit: 1024)) {
            try parse("HTTP/1.1 200 OK\r\n\(fields)\r\n", limit: 1024)
        }
    }

    @Test func anInvalidStatusLineIsMalformed() {
        for line in ["HTTP/1.1 2000 OK", "HTTP/1.1 OK", "HTTP/1.1 20x Fine", "HTTP/1.1"] {
            #expect(throws: CurlResponseHead.Failure.self) { try parse("\(line)\r\n\r\n") }
        }
    }

    @Test func conflictingContentLengthsAreMalformedAndRepeatsOfOneAreNot() throws {
        #expect(throws: CurlResponseHead.Failure.malformed("conflicting Content-Length values: 10, 20")) {
            try parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\nContent-Length: 20\r\n\r\n")
        }
        #expect(throws: CurlResponseHead.Failure.self) { try parse("HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n") }
        #expect(try parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\nContent-Length: 10, 10\r\n\r\n").fields.values(named: "Content-Length").count == 2)
    }

    @Test func aFoldedContentLengthIsCheckedAsItReads() {
        #expect(throws: CurlResponseHead.Failure.malformed("Content-Length is not a number: 10 20")) {
            try parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n 20\r\n\r\n")
        }
    }

    /// The coding a block's `Content-Encoding` names, read while its fields are collected.
    private func coding(_ fields: String) throws -> ContentDecoder.Coding? {
        let block = Array("HTTP/1.1 200 OK\r\n\(fields)\r\n".utf8)
        var buffer: [UInt8] = []
        return try block.withUnsafeBytes { try CurlResponseHead.parse(block: $0, maximumSize: 4096, buffer: &buffer, url: url).coding }
    }

    @Test func theContentCodingIsReadAsTheCombinedFieldWouldBe() throws {
        #expect(try coding("Content-Type: text/plain\r\ncontent-encoding: GZIP\r\n") == .gzip)
        #expect(try coding("Content-Encoding: deflate\r\n") == .deflate)
        #expect(try coding("Content-Encoding: br\r\n") == nil)
        #expect(try coding("Content-Length: 3\r\n") == nil)
        // Two fields combine into a list, which is never decoded; a folded one reads whole.
        #expect(try coding("Content-Encoding: gzip\r\nContent-Encoding: gzip\r\n") == nil)
        #expect(try coding("Content-Encoding: x\r\n gzip\r\n") == nil)
        #expect(try coding("Content-Encoding:\r\n gzip\r\n") == .gzip)
    }

    @Test func aRawBlockParsesAsItsLinesDo() throws {
        let text = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nA: 1\r\nB:  two \r\n\r\n"
        var buffer: [UInt8] = []
        let whole = try Array(text.utf8).withUnsafeBytes { try CurlResponseHead.parse(block: $0, maximumSize: 4096, buffer: &buffer, url: url).head }
        #expect(whole == (try parse(text)))
        #expect(buffer.capacity > 0, "the buffer comes back with its room, for the next head")
    }

    @Test func theLoopReadsStatusCodesAndBlankLinesOnly() {
        func status(_ line: String) -> Int { Array(line.utf8).withUnsafeBytes { CurlResponseHead.statusCode(ofStatusLine: $0) } }
        func blank(_ line: String) -> Bool { Array(line.utf8).withUnsafeBytes { CurlResponseHead.isBlankLine($0) } }
        #expect(status("HTTP/1.1 103 Early Hints\r\n") == 103)
        #expect(status("HTTP/2 200\r\n") == 200)
        #expect(status("HTTP/1.1  204 No Content\r\n") == 204)
        #expect(status("HTTP/1.1 20x\r\n") == 0)
        #expect(status("HTTP/1.1\r\n") == 0)
        #expect(blank("\r\n") && blank("\n"))
        #expect(!blank(" \r\n") && !blank("A: 1\r\n") && !blank(""))
    }

    @Test func tenThousandFieldsAreAllKept() throws {
        let fields = (0..<10_000).map { "X-Field-\($0): \($0)\r\n" }.joined()
        let head = try parse("HTTP/1.1 200 OK\r\n\(fields)\r\n", limit: 1 << 20)
        #expect(head.fields.count == 10_000)
        #expect(head.fields["X-Field-9999"] == "9999")
    }

    @Test func originsAreSchemeAndAuthority() {
        #expect(CurlTransfer.origin(of: "https://API.example:8443/v1?q=1") == "https://api.example:8443")
        #expect(CurlTransfer.origin(of: "http://127.0.0.1:8080") == "http://127.0.0.1:8080")
        #expect(CurlTransfer.origin(of: "http://host?q") == "http://host")
    }
}
#endif
