import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Percent-encoding")
struct PercentEncodingTests {
    @Test(arguments: [
        ("a b", "a%20b"), ("a&b", "a%26b"), ("a=b", "a%3Db"), ("a+b", "a%2Bb"), ("a/b", "a%2Fb"),
        ("100%", "100%25"), ("why?", "why%3F"), ("#tag", "%23tag"), ("é", "%C3%A9"), ("😀", "%F0%9F%98%80"),
        ("safe-._~AZaz09", "safe-._~AZaz09"), ("", ""),
    ])
    func queryComponentsEncodeEverythingButUnreserved(raw: String, encoded: String) {
        #expect(PercentEncoding.queryComponent(raw) == encoded)
    }

    @Test func queryParametersAreSortedByNameForStableURLs() {
        #expect(PercentEncoding.query(["b": "2", "a": "1", "c d": "3"]) == "a=1&b=2&c%20d=3")
    }

    @Test func queryItemsFollowTheParametersInTheirOrderWithRepeats() {
        let items = [URLQueryItem(name: "tag", value: "b&c"), URLQueryItem(name: "tag", value: "a"), URLQueryItem(name: "flag", value: nil)]
        #expect(PercentEncoding.query(["z": "1"], then: items) == "z=1&tag=b%26c&tag=a&flag")
        #expect(PercentEncoding.query([:], then: []) == "")
    }

    @Test(arguments: [
        ("users/John Smith", "users/John%20Smith"),
        ("files/ünïcödé", "files/%C3%BCn%C3%AFc%C3%B6d%C3%A9"),
        ("already%20encoded", "already%20encoded"),
        ("50%off", "50%25off"),
        ("search?q=1&x=2", "search?q=1&x=2"),
        ("a\"b<c>", "a%22b%3Cc%3E"),
    ])
    func pathsKeepDelimitersAndEscapesButEncodeWhatURLsForbid(raw: String, encoded: String) {
        #expect(PercentEncoding.path(raw) == encoded)
    }
}
