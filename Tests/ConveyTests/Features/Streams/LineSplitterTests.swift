import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Splitting a body into lines")
struct LineSplitterTests {
    /// Splits `text` delivered in pieces cut at `cuts`, returning the lines.
    private func lines(_ text: String, endings: LineSplitter.Endings, cuts: [Int] = [], limit: Int = 1 << 20) throws -> [String] {
        let bytes = Data(text.utf8)
        var splitter = LineSplitter(endings: endings, maximumLineLength: limit, url: nil)
        var found: [String] = []
        var start = 0
        for cut in cuts + [bytes.count] where cut >= start {
            try splitter.split(bytes.subdata(in: start..<cut)) { found.append(String(decoding: $0, as: UTF8.self)) }
            start = cut
        }
        if let last = splitter.finish() { found.append(String(decoding: last, as: UTF8.self)) }
        return found
    }

    @Test func lineFeedsAndCarriageReturnLineFeedsEndLines() throws {
        #expect(try lines("a\nb\r\nc", endings: .lineFeed) == ["a", "b", "c"])
        #expect(try lines("a\n\nb\n", endings: .lineFeed) == ["a", "", "b"])
    }

    @Test func aLoneCarriageReturnIsTextForPlainLines() throws {
        #expect(try lines("a\rb\n", endings: .lineFeed) == ["a\rb"])
    }

    @Test func everyCutOfTheInputGivesTheSameLines() throws {
        let text = "first\r\nsecond\n\r\nthird\r\n\nlast"
        let whole = try lines(text, endings: .lineFeed)
        #expect(whole == ["first", "second", "", "third", "", "last"])
        for cut in 0...text.utf8.count {
            #expect(try lines(text, endings: .lineFeed, cuts: [cut]) == whole, "cut at \(cut)")
        }
        #expect(try lines(text, endings: .lineFeed, cuts: Array(0...text.utf8.count)) == whole)
    }

    @Test func anyNewlineModeTreatsCarriageReturnsAsEndings() throws {
        let text = "a\rb\r\nc\nd\r\re"
        let whole = try lines(text, endings: .anyNewline)
        #expect(whole == ["a", "b", "c", "d", "", "e"])
        for cut in 0...text.utf8.count {
            #expect(try lines(text, endings: .anyNewline, cuts: [cut]) == whole, "cut at \(cut)")
        }
    }

    @Test func multiByteCharactersSurviveACutInsideThem() throws {
        let text = "ünïcödé 😀\nnext"
        for cut in 0...text.utf8.count {
            #expect(try lines(text, endings: .lineFeed, cuts: [cut]) == ["ünïcödé 😀", "next"])
        }
    }

    @Test func aLineOverTheLimitIsAnError() throws {
        #expect(try lines("12345\n", endings: .lineFeed, limit: 5) == ["12345"])
        #expect(throws: ConveyError.self) { try lines("123456\n", endings: .lineFeed, limit: 5) }
        #expect(throws: ConveyError.self) { try lines("123456", endings: .lineFeed, cuts: [2, 4], limit: 5) }
    }
}
