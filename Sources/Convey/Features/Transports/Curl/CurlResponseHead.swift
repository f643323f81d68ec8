#if os(Linux) && canImport(CConveyCurlShim)
import Foundation

/// Builds a response head from the header lines curl delivers one at a time, in time linear in
/// the size of the head, with a size limit, into one buffer: `name:value` lines, names checked
/// and values trimmed, which become the head's field text (`ResponseHead`) with no string per field.
///
/// Each status line starts a new block (a `100 Continue` or a redirect's block is replaced by the
/// next); repeated fields stay apart; an obsolete folded line continues the field above.
struct CurlResponseHead {
    /// What a status line and its fields gave so far.
    private(set) var statusCode = 0
    private(set) var httpVersion = "HTTP/1.1"
    /// The current block's fields, one `name:value\n` line each.
    private var lines: [UInt8]
    /// Bytes of the current block, status line included.
    private(set) var size = 0
    /// Whether a status line has arrived and its block has not ended.
    private(set) var inBlock = false
    private let maximumSize: Int
    /// The framing fields seen while the fields were collected, so that neither the head's
    /// checks nor the choice of a decoder read the field text again: how many `Content-Length`
    /// fields there were and whether each was a plain number; how many `Content-Encoding` fields,
    /// and the first one's value. A folded line after either leaves them to the field text.
    private var contentLengths = 0
    private var contentLengthsArePlain = true
    private var contentEncodings = 0
    private var contentEncoding: Range<Int>?
    private var framingFolded = false
    private var lastFieldFrames = false

    /// A parser that throws once a head passes `maximumSize` bytes, collecting into `buffer`
    /// (a buffer an earlier head used, so that its room is reused).
    init(maximumSize: Int, buffer: [UInt8] = []) {
        self.maximumSize = maximumSize
        lines = buffer
        lines.removeAll(keepingCapacity: true)
    }

    /// Gives the buffer back, for the next head.
    mutating func takeBuffer() -> [UInt8] {
        defer { lines = [] }
        return lines
    }

    /// Takes one line, line ending included. Returns `true` when it ended a block.
    /// Throws `CurlResponseHead.Failure` for a head that is too large or not HTTP.
    mutating func consume(_ line: UnsafeRawBufferPointer) throws -> Bool {
        if line.starts(with: Self.statusLinePrefix) {
            try startBlock(line)
            return false
        }
        guard inBlock else { throw Failure.malformed("a header line came before any status line") }
        size += line.count
        guard size <= maximumSize else { throw Failure.tooLarge(limit: maximumSize) }
        let content = Self.trimmed(line)
        if content.isEmpty {
            inBlock = false
            return true
        }
        if line[0] == UInt8(ascii: " ") || line[0] == UInt8(ascii: "\t") {
            // A folded line continues the field above, after a space.
            guard lines.last == UInt8(ascii: "\n") else { return false }
            if lastFieldFrames { framingFolded = true }
            lines.removeLast()
            lines.append(UInt8(ascii: " "))
            lines.append(contentsOf: content)
            lines.append(UInt8(ascii: "\n"))
            return false
        }
        // A line with no name, or whitespace in its name, is dropped, as browsers do (RFC 9112 §5.1).
        guard let colon = content.firstIndex(of: UInt8(ascii: ":")), colon > content.startIndex else { return false }
        let name = content[..<colon]
        guard !name.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) else { return false }
        let value = Self.trimmed(UnsafeRawBufferPointer(rebasing: content[(colon + 1)...]))
        if lines.isEmpty { lines.reserveCapacity(512) }
        lines.append(contentsOf: name)
        lines.append(UInt8(ascii: ":"))
        let valueStart = lines.count
        lines.append(contentsOf: value)
        noteFraming(name: name, value: value, at: valueStart..<lines.count)
        lines.append(UInt8(ascii: "\n"))
        return false
    }

    /// Counts a `Content-Length` or `Content-Encoding` field (see `contentLengths`).
    private mutating func noteFraming(name: UnsafeRawBufferPointer.SubSequence, value: UnsafeRawBufferPointer.SubSequence,
                                      at range: Range<Int>) {
        lastFieldFrames = false
        if name.count == 14, Self.equalsIgnoringCase(name, Self.contentLength) {
            lastFieldFrames = true
            contentLengths += 1
            contentLengthsArePlain = contentLengthsArePlain && !value.isEmpty && value.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        } else if name.count == 16, Self.equalsIgnoringCase(name, Self.contentEncodingName) {
            lastFieldFrames = true
            contentEncodings += 1
            if contentEncoding == nil { contentEncoding = range }
        }
    }

    private static let contentLength = Array("content-length".utf8)
    private static let contentEncodingName = Array("content-encoding".utf8)

    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer.SubSequence, _ lowercase: [UInt8]) -> Bool {
        bytes.elementsEqual(lowercase) { ($0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0) == $1 }
    }

    /// The coding Convey decodes that the head's `Content-Encoding` names, as
    /// `ContentDecoder.Coding(contentEncoding:)` reads the field's combined value.
    func contentCoding(of head: ResponseHead) -> ContentDecoder.Coding? {
        if framingFolded { return ContentDecoder.Coding(contentEncoding: head.value(forHTTPHeaderField: "Content-Encoding")) }
        // Several fields combine into a list, which is never decoded.
        guard contentEncodings == 1, let contentEncoding else { return nil }
        return ContentDecoder.Coding(contentEncoding: String(decoding: lines[contentEncoding], as: UTF8.self))
    }

    /// The completed head, after checks that need the whole block: conflicting `Content-Length`.
    func head(url: URL) throws -> ResponseHead {
        let head = ResponseHead(statusCode: statusCode, httpVersion: httpVersion, fieldLines: String(decoding: lines, as: UTF8.self), url: url)
        // The common case, at most one plain number, from what the fields showed as they came.
        if !framingFolded, contentLengths <= 1, contentLengthsArePlain { return head }
        var declared: [Substring] = []
        var plainNumber = true
        head.forEachValue(named: "Content-Length") { value in
            declared.append(value)
            plainNumber = plainNumber && !value.isEmpty && value.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
            return true
        }
        // The common case, one plain number, without building a set.
        if declared.count <= 1, plainNumber { return head }
        let lengths = Set(declared.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) })
        if lengths.count > 1 {
            throw Failure.malformed("conflicting Content-Length values: \(lengths.sorted().joined(separator: ", "))")
        }
        if let length = lengths.first, Int64(length) == nil || length.hasPrefix("-") || length.hasPrefix("+") {
            throw Failure.malformed("Content-Length is not a number: \(length.prefix(40))")
        }
        return head
    }

    /// Parses a whole block as curl delivered it (the status line, the field lines, the blank
    /// line), collecting into `buffer`, which comes back with its room for the next head.
    /// Also returns the coding of the body that Convey decodes, if any (`contentCoding(of:)`).
    static func parse(block: UnsafeRawBufferPointer, maximumSize: Int, buffer: inout [UInt8],
                      url: URL) throws -> (head: ResponseHead, coding: ContentDecoder.Coding?) {
        var parser = CurlResponseHead(maximumSize: maximumSize, buffer: buffer)
        buffer = []
        defer { buffer = parser.takeBuffer() }
        var start = block.startIndex
        while start < block.endIndex {
            let end = block[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? block.endIndex
            _ = try parser.consume(UnsafeRawBufferPointer(rebasing: block[start..<end]))
            start = end
        }
        let head = try parser.head(url: url)
        return (head, parser.contentCoding(of: head))
    }

    /// Whether `line` is a status line (`HTTP/1.1 200 OK`), which starts a block.
    static func isStatusLine(_ line: UnsafeRawBufferPointer) -> Bool {
        line.starts(with: statusLinePrefix)
    }

    /// The status code of a status line, or 0 when it has none: enough for the event loop to
    /// tell an interim block from the final one; `parse` checks the line in full.
    static func statusCode(ofStatusLine line: UnsafeRawBufferPointer) -> Int {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")),
              let first = line[space...].firstIndex(where: { $0 != UInt8(ascii: " ") }), first + 3 <= line.endIndex else { return 0 }
        var code = 0
        for digit in line[first..<(first + 3)] {
            guard digit >= 0x30, digit <= 0x39 else { return 0 }
            code = code * 10 + Int(digit - 0x30)
        }
        return code
    }

    /// Whether `line` is the blank line that ends a block.
    static func isBlankLine(_ line: UnsafeRawBufferPointer) -> Bool {
        line.count == 2 ? line[0] == UInt8(ascii: "\r") && line[1] == UInt8(ascii: "\n") : line.count == 1 && line[0] == UInt8(ascii: "\n")
    }

    /// Why a head was refused.
    enum Failure: Error, Equatable {
        case tooLarge(limit: Int)
        case malformed(String)
    }

    private mutating func startBlock(_ line: UnsafeRawBufferPointer) throws {
        size = line.count
        lines.removeAll(keepingCapacity: true)
        (contentLengths, contentLengthsArePlain, contentEncodings, contentEncoding) = (0, true, 0, nil)
        (framingFolded, lastFieldFrames) = (false, false)
        inBlock = true
        guard size <= maximumSize else { throw Failure.tooLarge(limit: maximumSize) }
        let content = Self.trimmed(line)
        guard let firstSpace = content.firstIndex(of: UInt8(ascii: " ")) else { throw invalidStatusLine(content) }
        let afterVersion = content[firstSpace...].drop { $0 == UInt8(ascii: " ") }
        let code = afterVersion.prefix { $0 != UInt8(ascii: " ") }
        guard code.count == 3, code.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { throw invalidStatusLine(content) }
        statusCode = code.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard (100...999).contains(statusCode) else { throw invalidStatusLine(content) }
        httpVersion = Self.version(content[..<firstSpace])
    }

    private func invalidStatusLine(_ content: UnsafeRawBufferPointer.SubSequence) -> Failure {
        .malformed("invalid status line: \(String(decoding: content, as: UTF8.self).prefix(80))")
    }

    /// The version as the status line spells it, the common ones without a string of their own.
    private static func version(_ bytes: UnsafeRawBufferPointer.SubSequence) -> String {
        for known in ["HTTP/1.1", "HTTP/2", "HTTP/1.0", "HTTP/3"] where bytes.elementsEqual(known.utf8) { return known }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// How every status line starts (`HTTP/1.1 200 OK`, `HTTP/2 200`).
    private static let statusLinePrefix = Array("HTTP/".utf8)

    /// The line without leading spaces and tabs and without trailing whitespace and CR/LF.
    private static func trimmed(_ line: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer.SubSequence {
        var lower = line.startIndex
        var upper = line.endIndex
        while lower < upper, line[lower] == UInt8(ascii: " ") || line[lower] == UInt8(ascii: "\t") { lower += 1 }
        while upper > lower, line[upper - 1] <= UInt8(ascii: " "),
              line[upper - 1] == UInt8(ascii: " ") || line[upper - 1] == UInt8(ascii: "\t")
                || line[upper - 1] == UInt8(ascii: "\r") || line[upper - 1] == UInt8(ascii: "\n") {
            upper -= 1
        }
        return line[lower..<upper]
    }
}
#endif
