import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Display formats")
struct DisplayFormatTests {
    @Test(arguments: [
        (Duration.microseconds(1234), "1.2 ms"), (.milliseconds(999), "999.0 ms"), (.milliseconds(1900), "1.90 s"), (.seconds(75), "75.00 s"),
    ])
    func durationsReadAsMillisecondsOrSeconds(duration: Duration, text: String) {
        #expect(DisplayFormat.duration(duration) == text)
    }

    @Test(arguments: [(0, "0 B"), (999, "999 B"), (1500, "1.5 KB"), (2_345_678, "2.3 MB"), (1_100_000_000, "1.1 GB")])
    func byteCountsUsePowersOfAThousand(count: Int, text: String) {
        #expect(DisplayFormat.byteCount(count) == text)
    }

    @Test func prettyJSONSortsKeysAndKeepsEmptyContainersOnOneLine() {
        let text = DisplayFormat.prettyJSON(Data(#"{"b": [], "a": {}, "url": "http://x/y"}"#.utf8))
        #expect(text == "{\n  \"a\" : {},\n  \"b\" : [],\n  \"url\" : \"http://x/y\"\n}")
        #expect(DisplayFormat.prettyJSON(Data("plain text".utf8)) == nil)
        #expect(DisplayFormat.prettyJSON(Data("42".utf8)) == nil)
    }
}
