import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Text from servers is made safe for a terminal")
struct TerminalSafeTests {
    @Test func controlCharactersAreEscapedAndLineBreaksKept() {
        let hostile = "a\u{1B}]0;title\u{07}b\u{1B}[2J\u{9B}31m\u{7F}\0\rc\r\nd\te\n"

        #expect(DisplayFormat.terminalSafe(hostile) == #"a\u{1B}]0;title\u{7}b\u{1B}[2J\u{9B}31m\u{7F}\u{0}\u{D}c"# + "\nd\te\n")
        #expect(DisplayFormat.terminalSafe("plain ‹text› ✓\n") == "plain ‹text› ✓\n")
    }

    @Test func jsonStaysTheSameValueWithEscapes() throws {
        let json = "{\"a\": \"x\u{9B}y\u{7F}\"}"

        let safe = DisplayFormat.terminalSafeJSON(json)

        #expect(safe == #"{"a": "x\u009By\u007F"}"#)
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(safe.utf8)) as? [String: String])
        #expect(decoded == ["a": "x\u{9B}y\u{7F}"])
    }
}
