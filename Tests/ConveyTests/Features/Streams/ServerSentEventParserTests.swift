import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The examples of WHATWG HTML §9.2 "Server-sent events" and its parsing rules.
@Suite("Parsing text/event-stream")
struct ServerSentEventParserTests {
    private func parse(_ text: String, chunkSize: Int? = nil, parser: inout ServerSentEventParser) throws -> [ServerSentEvent] {
        try parse(Data(text.utf8), chunkSize: chunkSize, parser: &parser)
    }

    private func parse(_ bytes: Data, chunkSize: Int? = nil, parser: inout ServerSentEventParser) throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        let size = max(chunkSize ?? bytes.count, 1)
        var start = 0
        repeat {
            let end = min(start + size, bytes.count)
            try parser.feed(bytes.subdata(in: start..<end)) { events.append($0) }
            start = end
        } while start < bytes.count
        return events
    }

    private func parse(_ text: String, chunkSize: Int? = nil) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        return try parse(text, chunkSize: chunkSize, parser: &parser)
    }

    @Test func theStockExampleGivesOneMessageWithThreeLines() throws {
        let events = try parse("data: YHOO\ndata: +2\ndata: 10\n\n")
        #expect(events == [ServerSentEvent(type: "message", data: "YHOO\n+2\n10")])
    }

    @Test func commentsAreIgnoredAndIDsCarryOver() throws {
        let text = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n"
        let events = try parse(text)
        #expect(events.map(\.data) == ["first event", "second event"])
        #expect(events.map(\.id) == ["1", ""])
    }

    @Test func onlyOneSpaceAfterTheColonIsRemoved() throws {
        let events = try parse("data:  third event\n\n")
        #expect(events.map(\.data) == [" third event"])
    }

    @Test func emptyDataFieldsMakeEmptyLines() throws {
        let events = try parse("data\n\ndata\ndata\n\ndata:\n")
        #expect(events.map(\.data) == ["", "\n"])
    }

    @Test func aFieldNameAloneAndWithAColonAreTheSame() throws {
        #expect(try parse("data:test\n\ndata: test\n\n").map(\.data) == ["test", "test"])
    }

    @Test func eventTypesNameEventsAndResetAfterEach() throws {
        let events = try parse("event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\ndata: plain\n\n")
        #expect(events.map(\.type) == ["add", "remove", "message"])
        #expect(events.map(\.data) == ["73857293", "2153", "plain"])
    }

    @Test func anEventWithoutDataIsNotDispatchedButItsIDCounts() throws {
        var parser = ServerSentEventParser()
        let events = try parse("event: ping\nid: 7\n\n", parser: &parser)
        #expect(events.isEmpty)
        #expect(parser.lastEventID == "7")
    }

    @Test func anIDWithNULIsIgnored() throws {
        var parser = ServerSentEventParser()
        _ = try parse("id: 1\ndata: a\n\nid: 2\u{0}x\ndata: b\n\n", parser: &parser)
        #expect(parser.lastEventID == "1")
    }

    @Test func retryTakesOnlyDigits() throws {
        var parser = ServerSentEventParser()
        _ = try parse("retry: 1500\n\n", parser: &parser)
        #expect(parser.retryMilliseconds == 1500)
        _ = try parse("retry: 15x\n\nretry: -3\n\nretry:\n\nretry: 2.5\n\n", parser: &parser)
        #expect(parser.retryMilliseconds == 1500)
    }

    @Test func unknownFieldsAreIgnored() throws {
        #expect(try parse("foo: bar\ndata: kept\nDATA: not a field\n\n").map(\.data) == ["kept"])
    }

    @Test(arguments: ["\n", "\r", "\r\n"])
    func everyLineEndingWorksInPiecesOfAnySize(ending: String) throws {
        let text = ["event: tick", "data: one", "data: two", "id: 3", "", "data: after", "", ""].joined(separator: ending)
        let expected = [ServerSentEvent(type: "tick", data: "one\ntwo", id: "3"), ServerSentEvent(data: "after", id: "3")]
        for size in 1...6 {
            #expect(try parse(text, chunkSize: size) == expected, "pieces of \(size)")
        }
    }

    @Test func aLeadingByteOrderMarkIsDroppedEvenWhenSplit() throws {
        var stream = Data([0xEF, 0xBB, 0xBF])
        stream.append(Data("data: x\n\n".utf8))
        for size in 1...4 {
            var parser = ServerSentEventParser()
            #expect(try parse(stream, chunkSize: size, parser: &parser).map(\.data) == ["x"])
        }
        // Not a whole mark: the bytes stay, and spoil the field name they start.
        var parser = ServerSentEventParser()
        #expect(try parse(Data([0xEF, 0xBB]) + Data("data: y\n\n".utf8), parser: &parser).isEmpty)
    }

    @Test func anUnfinishedEventIsDroppedWhenTheConnectionEnds() throws {
        var parser = ServerSentEventParser()
        #expect(try parse("data: partial\n", parser: &parser).isEmpty)
        parser.beginConnection(url: nil)
        #expect(try parse("data: whole\n\n", parser: &parser).map(\.data) == ["whole"])
    }

    @Test func dataOverTheSizeLimitIsAnError() throws {
        var parser = ServerSentEventParser(maximumEventSize: 8)
        #expect(throws: ConveyError.self) { try parse("data: 1234\ndata: 5678\n\n", parser: &parser) }
    }

    @Test func eventsDecodeFromJSON() throws {
        struct Tick: Decodable { let n: Int }
        let event = try #require(try parse("data: {\"n\": 4}\n\n").first)
        #expect(try event.decoded(as: Tick.self).n == 4)
        #expect(throws: ConveyError.self) { try ServerSentEvent(data: "not json").decoded(as: Tick.self) }
    }
}
