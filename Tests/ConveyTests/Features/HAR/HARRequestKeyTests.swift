import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("HAR request keys")
struct HARRequestKeyTests {
    private func key(_ url: String, _ method: String = "GET") -> HARRequestKey? { HARRequestKey(method: method, url: url) }

    @Test func spellingsOfOneURLShareAKey() {
        let plain = key("https://api.example.com/a~b/%2Fc?x=1")
        #expect(plain?.target == "GET https://api.example.com/a~b/%2Fc")
        #expect(key("HTTPS://user:pw@API.Example.com:443/a%7eb/%2fc?x=1#frag", "get")?.target == plain?.target)
        #expect(key("http://h.example:80")?.target == "GET http://h.example/")
        #expect(key("http://h.example:8080/")?.target == "GET http://h.example:8080/")
        #expect(key("http://[::1]:8080/x")?.target == "GET http://[::1]:8080/x")
    }

    @Test func queryParametersAreDecodedAndKeepTheirRepeats() {
        let query = key("https://h.example/?q=caf%C3%A9+au%20lait&a=1&a=2&flag&bad=%E9")?.query.map { "\($0.name)=\($0.value)" }
        #expect(query == ["q=café au lait", "a=1", "a=2", "flag=", "bad=%E9"])
    }

    @Test func aMaskedValueStandsForAnyValueOfItsName() throws {
        let fixture = try #require(key("https://h.example/?page=2&token=%E2%80%B9redacted%E2%80%BA"))
        #expect(fixture.queryAnswers(try #require(key("https://h.example/?token=abc&page=2")).query))
        #expect(!fixture.queryAnswers(try #require(key("https://h.example/?token=abc&page=3")).query))
        #expect(!fixture.queryAnswers(try #require(key("https://h.example/?page=2")).query))
    }

    @Test func onlyHTTPURLsWithAHostHaveKeys() {
        #expect(key("data:text/plain,hi") == nil)
        #expect(key("ftp://h.example/f") == nil)
        #expect(key("http:///nohost") == nil)
        #expect(key("not a url") == nil)
    }
}
