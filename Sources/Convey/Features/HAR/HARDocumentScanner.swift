/// Finds the places in a HAR document's JSON where a writer splices: the `log.entries` array and
/// its last entry, the log's `comment` and its last member. It checks that the whole text is
/// JSON while it goes, without building any value, and refuses nesting deeper than `maximumDepth`.
struct HARDocumentScanner {
    /// Where things are, as byte offsets into the document.
    struct Layout {
        /// The `[` that opens `log.entries`.
        var entriesOpen: Int
        /// Just after the last entry's value; `nil` when the array is empty.
        var lastEntryEnd: Int?
        /// The whole string token of `log.comment` (quotes included), when it is a string.
        var comment: Range<Int>?
        /// Just after the value of the log's last member.
        var logLastMemberEnd: Int
    }

    /// Why the text is not a HAR document to splice into, and at which byte.
    struct Failure: Error {
        let offset: Int
        let reason: String
    }

    /// The deepest nesting accepted; HAR itself needs six levels.
    static let maximumDepth = 256

    private let bytes: [UInt8]
    private var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func scan() throws(Failure) -> Layout {
        var layout: Layout?
        try object(depth: 1) { scanner, key throws(Failure) in
            if key.elementsEqual("log".utf8), scanner.peek() == UInt8(ascii: "{") {
                layout = try scanner.log()
            } else {
                try scanner.value(depth: 2)
            }
        }
        skipWhitespace()
        guard index == bytes.count else { throw Failure(offset: index, reason: "text after the document's end") }
        guard let layout else { throw Failure(offset: 0, reason: "no \"log\" object") }
        return layout
    }

    private mutating func log() throws(Failure) -> Layout {
        var entriesOpen: Int?
        var lastEntryEnd: Int?
        var comment: Range<Int>?
        var lastMemberEnd = index + 1
        try object(depth: 2) { scanner, key throws(Failure) in
            if key.elementsEqual("entries".utf8), scanner.peek() == UInt8(ascii: "[") {
                entriesOpen = scanner.index
                lastEntryEnd = try scanner.arrayReturningLastElementEnd(depth: 3)
            } else if key.elementsEqual("comment".utf8), scanner.peek() == UInt8(ascii: "\"") {
                let start = scanner.index
                try scanner.string()
                comment = start..<scanner.index
            } else {
                try scanner.value(depth: 3)
            }
            lastMemberEnd = scanner.index
        }
        guard let entriesOpen else { throw Failure(offset: lastMemberEnd, reason: "the log has no \"entries\" array") }
        return Layout(entriesOpen: entriesOpen, lastEntryEnd: lastEntryEnd, comment: comment, logLastMemberEnd: lastMemberEnd)
    }

    /// An object; `member` reads each member's value, the scanner standing on its first byte.
    private mutating func object(depth: Int, member: (inout HARDocumentScanner, ArraySlice<UInt8>) throws(Failure) -> Void) throws(Failure) {
        guard depth <= Self.maximumDepth else { throw Failure(offset: index, reason: "nested deeper than \(Self.maximumDepth) levels") }
        skipWhitespace()
        try expect(UInt8(ascii: "{"))
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            let keyStart = index
            try string()
            let key = bytes[(keyStart + 1)..<(index - 1)]
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            try member(&self, key)
            skipWhitespace()
            if peek() == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "}"))
            return
        }
    }

    /// An array; returns the offset just after its last element, `nil` when it is empty.
    private mutating func arrayReturningLastElementEnd(depth: Int) throws(Failure) -> Int? {
        guard depth <= Self.maximumDepth else { throw Failure(offset: index, reason: "nested deeper than \(Self.maximumDepth) levels") }
        try expect(UInt8(ascii: "["))
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return nil
        }
        var lastEnd = index
        while true {
            skipWhitespace()
            try value(depth: depth + 1)
            lastEnd = index
            skipWhitespace()
            if peek() == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "]"))
            return lastEnd
        }
    }

    /// Any JSON value, skipped.
    private mutating func value(depth: Int) throws(Failure) {
        switch peek() {
        case UInt8(ascii: "{"): try object(depth: depth) { scanner, _ throws(Failure) in try scanner.value(depth: depth + 1) }
        case UInt8(ascii: "["): _ = try arrayReturningLastElementEnd(depth: depth)
        case UInt8(ascii: "\""): try string()
        default: try scalar()
        }
    }

    /// A string token, escapes skipped; the scanner ends after its closing quote.
    private mutating func string() throws(Failure) {
        try expect(UInt8(ascii: "\""))
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""):
                index += 1
                return
            case 0..<0x20: throw Failure(offset: index, reason: "a control character inside a string")
            default: index += 1
            }
        }
        throw Failure(offset: bytes.count, reason: "a string that never ends")
    }

    /// A number, `true`, `false` or `null`.
    private mutating func scalar() throws(Failure) {
        let start = index
        while index < bytes.count, Self.isScalarByte(bytes[index]) { index += 1 }
        let token = bytes[start..<index]
        guard !token.isEmpty else { throw Failure(offset: start, reason: "a value was expected") }
        let isLiteral = token.elementsEqual("true".utf8) || token.elementsEqual("false".utf8) || token.elementsEqual("null".utf8)
        guard isLiteral || token.allSatisfy({ !Self.isLetter($0) || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else {
            throw Failure(offset: start, reason: "not a JSON value")
        }
    }

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard peek() == byte else {
            throw Failure(offset: index, reason: index < bytes.count ? "'\(Character(Unicode.Scalar(byte)))' was expected" : "the document ends early")
        }
        index += 1
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
    }

    private static func isScalarByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: ".")
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}
