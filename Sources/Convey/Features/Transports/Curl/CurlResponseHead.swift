#if canImport(CConveyCurlShim)
import Foundation

/// Builds a response head from the header lines curl delivers one at a time, in time linear in
/// the size of the head, with a size limit.
///
/// Each status line starts a new block (a `100 Continue` or a redirect's block is replaced by the
/// next); repeated fields stay apart; an obsolete folded line continues the field above.
struct CurlResponseHead {
    /// What a status line and its fields gave so far.
    private(set) var statusCode = 0
    private(set) var httpVersion = "HTTP/1.1"
    private(set) var fields = Headers()
    /// Bytes of the current block, status line included.
    private(set) var size = 0
    /// Whether a status line has arrived and its block has not ended.
    private(set) var inBlock = false
    private let maximumSize: Int

    /// A parser that throws once a head passes `maximumSize` bytes.
    init(maximumSize: Int) {
        self.maximumSize = maximumSize
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
            fields.continueLastField(with: Self.text(content))
            return false
        }
        // A line with no name, or whitespace in its name, is dropped, as browsers do (RFC 9112 §5.1).
        guard let colon = content.firstIndex(of: UInt8(ascii: ":")), colon > content.startIndex else { return false }
        let name = UnsafeRawBufferPointer(rebasing: content[..<colon])
        guard !name.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) else { return false }
        let value = Self.trimmed(UnsafeRawBufferPointer(rebasing: content[(colon + 1)...]))
        fields.appendLine(Header(name: Self.text(name), value: Self.text(value)))
        return false
    }

    /// The completed head, after checks that need the whole block: conflicting `Content-Length`.
    func head(url: URL) throws -> ResponseHead {
        let declared = fields.values(named: "Content-Length")
        // The common case, one plain number, without building a set.
        if declared.count <= 1, declared.first.map({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }) ?? true {
            return ResponseHead(statusCode: statusCode, httpVersion: httpVersion, fields: fields, url: url)
        }
        let lengths = Set(declared.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) })
        if lengths.count > 1 {
            throw Failure.malformed("conflicting Content-Length values: \(lengths.sorted().joined(separator: ", "))")
        }
        if let length = lengths.first, Int64(length) == nil || length.hasPrefix("-") || length.hasPrefix("+") {
            throw Failure.malformed("Content-Length is not a number: \(length.prefix(40))")
        }
        return ResponseHead(statusCode: statusCode, httpVersion: httpVersion, fields: fields, url: url)
    }

    /// Why a head was refused.
    enum Failure: Error, Equatable {
        case tooLarge(limit: Int)
        case malformed(String)
    }

    private mutating func startBlock(_ line: UnsafeRawBufferPointer) throws {
        size = line.count
        fields = Headers()
        inBlock = true
        guard size <= maximumSize else { throw Failure.tooLarge(limit: maximumSize) }
        let content = Self.trimmed(line)
        let parts = content.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[1].count == 3, let code = Int(Self.text(UnsafeRawBufferPointer(rebasing: parts[1]))),
              (100...999).contains(code) else {
            throw Failure.malformed("invalid status line: \(Self.text(content).prefix(80))")
        }
        httpVersion = Self.text(UnsafeRawBufferPointer(rebasing: parts[0]))
        statusCode = code
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

    private static func text(_ bytes: UnsafeRawBufferPointer.SubSequence) -> String {
        text(UnsafeRawBufferPointer(rebasing: bytes))
    }

    private static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
#endif
