import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Remote")
struct RemoteTests {
    @Test(arguments: [
        ("https://api.example.com", "", "users", "https://api.example.com/users"),
        ("https://api.example.com/", "", "/users", "https://api.example.com/users"),
        ("https://api.example.com//", "/v2/", "//users/1", "https://api.example.com/v2/users/1"),
        ("https://api.example.com/base", "v2", "users/", "https://api.example.com/base/v2/users/"),
        ("https://api.example.com/base/", "/api/v2", "", "https://api.example.com/base/api/v2"),
        ("http://127.0.0.1:8080", "prefix", "a/b", "http://127.0.0.1:8080/prefix/a/b"),
    ])
    func joiningNeverDoublesSlashesOrDropsThePrefix(base: String, prefix: String, path: String, expected: String) throws {
        let remote = try #require(Remote(name: "test", string: base, pathPrefix: prefix))
        #expect(remote.urlString(forPath: path) == expected)
    }

    @Test func onlyAbsoluteHTTPURLsMakeARemote() {
        #expect(Remote(name: "x", string: "ftp://example.com") == nil)
        #expect(Remote(name: "x", string: "not a url") == nil)
        #expect(Remote(name: "x", string: "/relative/path") == nil)
        #expect(Remote(name: "x", string: "HTTPS://Example.com") != nil)
    }

    @Test func descriptionNamesTheEnvironmentAndItsBase() throws {
        let remote = try #require(Remote(name: "staging", string: "https://staging.example.com", pathPrefix: "v1"))
        #expect(remote.description == "staging (https://staging.example.com/v1)")
    }
}
