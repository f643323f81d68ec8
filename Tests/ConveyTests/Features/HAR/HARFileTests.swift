import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// HAR files are untrusted input: every malformed file is a typed error saying where, never a crash.
@Suite("HAR files as untrusted input")
struct HARFileTests {
    private func invalid(_ text: String) throws -> ConveyError? {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("bad.har")
        try Data(text.utf8).write(to: file)
        return #expect(throws: ConveyError.self) { try HARFixtures(file: file) }
    }

    private func location(of error: ConveyError?) -> String? {
        guard case .harFileUnusable(_, let location?, _)? = error else { return nil }
        return location
    }

    @Test func textThatIsNotJSONIsAnErrorAboutTheDocument() throws {
        let error = try invalid("{ \"log\": { \"entries\": [ ")
        #expect(location(of: error) == "(document)")
        #expect(error?.logDetail.contains("not valid JSON") == true)
    }

    @Test func aValueOfTheWrongTypeIsAnErrorNamingItsPlace() throws {
        let good = #"{"request": {"method": "GET", "url": "https://a.example/"}, "response": {"status": 200}}"#
        let bad = #"{"request": {"method": "GET", "url": "https://a.example/"}, "response": {"status": "OK"}}"#
        let error = try invalid(#"{"log": {"entries": [\#(good), \#(bad)]}}"#)
        #expect(location(of: error) == "log.entries[1].response.status")
    }

    @Test func aMissingRequiredFieldIsAnErrorNamingItsPlace() throws {
        let error = try invalid(#"{"log": {"entries": [{"request": {"url": "https://a.example/"}}]}}"#)
        #expect(location(of: error) == "log.entries[0].request.method")
    }

    @Test func brokenBase64IsAnErrorNamingItsPlace() throws {
        let entry = #"{"request": {"method": "GET", "url": "https://a.example/"}, "response": {"status": 200, "content": {"text": "%%%not base64", "encoding": "base64"}}}"#
        let error = try invalid(#"{"log": {"entries": [\#(entry)]}}"#)
        #expect(location(of: error) == "log.entries[0].response.content.text")
        #expect(error?.logDetail.contains("not valid base64") == true)
    }

    @Test func anUnknownContentEncodingIsAnError() throws {
        let entry = #"{"request": {"method": "GET", "url": "https://a.example/"}, "response": {"status": 200, "content": {"text": "x", "encoding": "rot13"}}}"#
        let error = try invalid(#"{"log": {"entries": [\#(entry)]}}"#)
        #expect(error?.logDetail.contains("unknown encoding 'rot13'") == true)
    }

    @Test func anImpossibleStatusIsAnError() throws {
        let entry = #"{"request": {"method": "GET", "url": "https://a.example/"}, "response": {"status": 99999}}"#
        let error = try invalid(#"{"log": {"entries": [\#(entry)]}}"#)
        #expect(location(of: error) == "log.entries[0].response.status")
    }

    @Test func deeplyNestedJSONIsAnErrorNotACrash() throws {
        let depth = 100_000
        let error = try invalid(#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://a.example/", "x": "#
                                + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}}]}}")
        #expect(error != nil)
    }

    @Test func entriesThatCanNeverMatchAreSkippedNotFatal() throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("browser.har")
        try HARText.write([
            HARText.entry("GET", "data:image/png;base64,AAAA"),
            HARText.entry("GET", "chrome-extension://abc/script.js"),
            HARText.entry("GET", "https://a.example/kept"),
        ], to: file)

        let fixtures = try HARFixtures(file: file)

        #expect(fixtures.skippedEntryCount == 2)
        #expect(fixtures.unansweredEntries == ["GET https://a.example/kept"])
    }

    @Test func aLinkOrAFIFOInTheFilesPlaceIsRefused() throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let real = scratch.file("real.har")
        try HARText.write([HARText.entry("GET", "https://a.example/")], to: real)
        let link = scratch.file("link.har")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let fifo = scratch.file("fifo.har")
        #expect(mkfifo(fifo.path(percentEncoded: false), 0o600) == 0)

        let linkError = #expect(throws: ConveyError.self) { try HARFixtures(file: link) }
        let fifoError = #expect(throws: ConveyError.self) { try HARFixtures(file: fifo) }

        #expect(linkError?.logDetail.contains("symbolic link") == true)
        #expect(fifoError?.logDetail.contains("not a regular file") == true)
    }

    @Test func aFileOverTheSizeLimitIsRefusedBeforeItIsRead() throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("huge.har")
        #expect(FileManager.default.createFile(atPath: file.path(percentEncoded: false), contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: UInt64(HARAppender.maximumFileSize + 1))
        try handle.close()

        let error = #expect(throws: ConveyError.self) { try HARFixtures(file: file) }

        guard case .harFileUnusable(_, nil, let reason)? = error, reason.hasPrefix("could not read it: ") else {
            Issue.record("expected an unreadable file, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("more than the \(HARAppender.maximumFileSize) expected"))
    }

    @Test func appendingToAFileThatIsNotHARLeavesItUntouched() throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("notes.har")
        let notes = Data(#"{"notes": ["not a HAR file"]}"#.utf8)
        try notes.write(to: file)
        let splice = #expect(throws: HARError.self) {
            try HARDocumentSplice(document: Array(notes), path: file.path(percentEncoded: false), addingComment: nil)
        }

        #expect(splice?.conveyError.logDetail.contains("no \"log\" object") == true)
        #expect(try Data(contentsOf: file) == notes)
    }

    @Test func theScannerFindsTheEntriesWhereverTheLogPutsThem() throws {
        let document = #"{"log": {"comment": "a \"quoted\" note", "entries": [ {"x": [1, {"y": "]"}]}, 2 ], "version": "1.2"}}"#

        let splice = try HARDocumentSplice(document: Array(document.utf8), path: "inline", addingComment: "kept")
        let joined = String(decoding: splice.prefix + Array(#", 3"#.utf8) + splice.suffix, as: UTF8.self)

        let object = try #require(try JSONSerialization.jsonObject(with: Data(joined.utf8)) as? [String: Any])
        let log = try #require(object["log"] as? [String: Any])
        #expect(log["comment"] as? String == #"a "quoted" note kept"#)
        #expect((log["entries"] as? [Any])?.count == 3)
        #expect(splice.hasEntries)
    }
}
