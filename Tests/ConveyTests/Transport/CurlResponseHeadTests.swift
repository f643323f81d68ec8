#if canImport(CConveyCurlShim)
import Foundation
import Testing
@testable import Convey

/// Turning curl's raw header block into header fields.
struct CurlResponseHeadTests {
    private func fields(_ text: String) -> [String: String] {
        CurlResponseHead.fields(in: Array(text.utf8))
    }

    @Test func fieldsAreTrimmedAndTheStatusLineSkipped() {
        #expect(fields("HTTP/1.1 200 OK\r\nContent-Type:  text/plain \r\nContent-Length: 5\r\n\r\n")
                == ["Content-Type": "text/plain", "Content-Length": "5"])
    }

    @Test func repeatedFieldsAreJoinedUnderTheFirstSpelling() {
        #expect(fields("HTTP/2 200\r\nx-dup: a\r\nX-Dup: b\r\nx-DUP: c\r\n\r\n") == ["x-dup": "a, b, c"])
    }

    @Test func foldedLinesContinueTheFieldAbove() {
        #expect(fields("HTTP/1.1 200 OK\r\nX-Long: first\r\n  second\r\n\tthird\r\n\r\n") == ["X-Long": "first second third"])
    }

    @Test func malformedLinesAreSkipped() {
        #expect(fields("HTTP/1.1 200 OK\r\nno colon here\r\n: no name\r\nGood: yes\r\nEmpty:\r\n\r\n") == ["Good": "yes", "Empty": ""])
    }

    @Test func bareLineFeedsWork() {
        #expect(fields("HTTP/1.0 200 OK\nA: 1\nB: 2\n\n") == ["A": "1", "B": "2"])
    }

    @Test func headerNamesCompareIgnoringASCIICase() {
        #expect(CurlHeaderName.matches("Content-Type", "content-TYPE"))
        #expect(!CurlHeaderName.matches("Content-Type", "Content-Typo"))
        var headers = ["accept-encoding": "gzip", "Other": "1"]
        let removed = CurlHeaderName.remove("Accept-Encoding", from: &headers)
        #expect(removed == "gzip")
        #expect(headers == ["Other": "1"])
    }

    @Test func originsAreSchemeAndAuthority() {
        #expect(CurlTransfer.origin(of: "https://API.example:8443/v1?q=1") == "https://api.example:8443")
        #expect(CurlTransfer.origin(of: "http://127.0.0.1:8080") == "http://127.0.0.1:8080")
        #expect(CurlTransfer.origin(of: "http://host?q") == "http://host")
    }
}
#endif
