import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// `CONVEY_TRANSPORT`, as `BuiltInTransport.platformDefault` reads it.
@Suite("Built-in transport from the environment")
struct BuiltInTransportTests {
    private static let platforms: BuiltInTransport = BuiltInTransport.curl.isAvailable ? .curl : .urlSession

    @Test(arguments: [("urlSession", BuiltInTransport.urlSession), ("urlsession", .urlSession), ("URLSESSION", .urlSession),
                      ("curl", .curl), ("Curl", .curl)])
    func everySpellingOfANameChoosesItsTransport(value: String, expected: BuiltInTransport) {
        var warnings: [String] = []
        #expect(BuiltInTransport.named(byEnvironment: value) { warnings.append($0) } == expected)
        #expect(warnings.isEmpty)
    }

    @Test(arguments: [nil, ""])
    func noValueIsThePlatformsTransportSilently(value: String?) {
        var warnings: [String] = []
        #expect(BuiltInTransport.named(byEnvironment: value) { warnings.append($0) } == Self.platforms)
        #expect(warnings.isEmpty)
    }

    @Test func anUnknownValueIsSaidAndThePlatformsTransportUsed() {
        var warnings: [String] = []
        let chosen = BuiltInTransport.named(byEnvironment: "url-session\u{1B}[2J") { warnings.append($0) }
        #expect(chosen == Self.platforms)
        #expect(warnings == [#"CONVEY_TRANSPORT=url-session\u{1B}[2J names no transport (curl or urlSession): using "# + Self.platforms.rawValue])
    }
}
