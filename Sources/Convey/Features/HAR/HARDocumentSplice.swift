/// Where new entries go in a HAR document: the bytes before them and after them.
///
/// A new document is Convey's header and closing lines. An existing one (Convey's or another
/// tool's) is split right after its last entry, found by scanning its JSON, so everything else in
/// it stays byte for byte: new entries are spliced in, never the whole log rewritten from a model.
struct HARDocumentSplice {
    /// Everything up to where the first new entry goes.
    var prefix: [UInt8]
    /// Everything after the last new entry.
    var suffix: [UInt8]
    /// Whether entries come before the new ones, so the first new one needs a comma.
    var hasEntries: Bool

    private init(prefix: [UInt8], suffix: [UInt8], hasEntries: Bool) {
        self.prefix = prefix
        self.suffix = suffix
        self.hasEntries = hasEntries
    }

    /// The indentation of an entry in Convey's own layout.
    static let entryIndent = "      "

    /// The start of a new document: `{"log": {"version": "1.2", "creator": …, "entries": [`.
    static func newDocument() -> HARDocumentSplice {
        var json = HARJSONWriter()
        json.beginObject()
        json.key("log")
        json.beginObject()
        json.member("version", "1.2")
        json.key("creator")
        json.beginObject()
        json.member("name", "Convey")
        json.member("version", conveyVersion)
        json.endObject()
        json.key("entries")
        return HARDocumentSplice(prefix: json.bytes + Array("[".utf8), suffix: newDocumentEnding(comment: nil), hasEntries: false)
    }

    /// What closes a new document: the entries, the log's `comment` when there is one, the log, the file.
    static func newDocumentEnding(comment: String?) -> [UInt8] {
        var ending = Array("\n    ]".utf8)
        if let comment {
            var json = HARJSONWriter()
            json.string(comment)
            ending += Array(",\n    \"comment\": ".utf8) + json.bytes
        }
        return ending + Array("\n  }\n}\n".utf8)
    }

    /// The existing document `bytes` split after its last entry; `comment`, when given, is added to
    /// the log's `comment` (created if missing, appended to unless already there).
    init(document bytes: [UInt8], path: String, addingComment comment: String?) throws(HARError) {
        var scanner = HARDocumentScanner(bytes: bytes)
        let layout: HARDocumentScanner.Layout
        do {
            layout = try scanner.scan()
        } catch {
            throw HARError.invalidFile(path: path, location: "byte \(error.offset)", reason: error.reason)
        }
        var edited = bytes
        var insertion = layout.lastEntryEnd ?? layout.entriesOpen + 1
        if let comment, let edit = Self.commentEdit(layout, bytes: bytes, comment: comment) {
            edited.replaceSubrange(edit.range, with: edit.replacement)
            if edit.range.lowerBound < insertion { insertion += edit.replacement.count - edit.range.count }
        }
        prefix = Array(edited[..<insertion])
        suffix = Array(edited[insertion...])
        hasEntries = layout.lastEntryEnd != nil
    }

    /// The change that puts `comment` in the log's comment: appended inside an existing string
    /// that does not hold it yet, or a new member after the log's last one.
    private static func commentEdit(_ layout: HARDocumentScanner.Layout, bytes: [UInt8], comment: String) -> (range: Range<Int>, replacement: [UInt8])? {
        var json = HARJSONWriter()
        json.string(comment)
        let quoted = json.bytes
        if let existing = layout.comment {
            let inner = quoted.dropFirst().dropLast()
            guard !contains(bytes[existing], inner) else { return nil }
            // Before the closing quote: the comment is written with the same escapes, so it stays one valid string.
            let closingQuote = existing.upperBound - 1
            return (closingQuote..<closingQuote, Array(" ".utf8) + inner)
        }
        return (layout.logLastMemberEnd..<layout.logLastMemberEnd, Array(",\n    \"comment\": ".utf8) + quoted)
    }

    private static func contains(_ haystack: ArraySlice<UInt8>, _ needle: ArraySlice<UInt8>) -> Bool {
        guard haystack.count >= needle.count else { return false }
        var start = haystack.startIndex
        while start <= haystack.endIndex - needle.count {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
            start += 1
        }
        return false
    }
}
