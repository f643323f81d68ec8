import Foundation

/// Splits bytes that arrive in arbitrary pieces into lines, without their endings.
///
/// Shared by `LineReader` (`\n` and `\r\n`) and the server-sent events parser (also a lone
/// `\r`, as the event-stream format allows). A `\r\n` split across two pieces is one ending.
struct LineSplitter {
    /// Which bytes end a line.
    enum Endings {
        /// `\n`, with a `\r` just before it removed.
        case lineFeed
        /// `\r\n`, `\n` or `\r`.
        case anyNewline
    }

    private let endings: Endings
    private let maximumLineLength: Int
    /// The URL the bytes come from, for errors.
    private let url: URL?
    /// The start of a line whose end has not arrived yet.
    private var partial: [UInt8] = []
    /// The last piece ended with `\r` (in `anyNewline` mode): a `\n` starting the next one belongs to it.
    private var afterCarriageReturn = false

    init(endings: Endings, maximumLineLength: Int, url: URL?) {
        self.endings = endings
        self.maximumLineLength = maximumLineLength
        self.url = url
    }

    /// Calls `line` for each line that `bytes` completes. Throws
    /// `ConveyError.responseTooLarge` when a line passes the length limit.
    mutating func split(_ bytes: Data, line: (ArraySlice<UInt8>) throws -> Void) throws {
        try bytes.withUnsafeBytes { raw in
            let buffer = raw.bindMemory(to: UInt8.self)
            var start = 0
            var index = 0
            if afterCarriageReturn, !buffer.isEmpty {
                afterCarriageReturn = false
                if buffer[0] == UInt8(ascii: "\n") {
                    start = 1
                    index = 1
                }
            }
            while index < buffer.count {
                let byte = buffer[index]
                let isEnd = byte == UInt8(ascii: "\n") || (endings == .anyNewline && byte == UInt8(ascii: "\r"))
                guard isEnd else {
                    index += 1
                    continue
                }
                var end = index
                if endings == .lineFeed, byte == UInt8(ascii: "\n") {
                    if end > start, buffer[end - 1] == UInt8(ascii: "\r") {
                        end -= 1
                    } else if end == start, partial.last == UInt8(ascii: "\r") {
                        partial.removeLast()
                    }
                }
                try emit(UnsafeBufferPointer(rebasing: buffer[start..<end]), line: line)
                index += 1
                if byte == UInt8(ascii: "\r") {
                    if index < buffer.count {
                        if buffer[index] == UInt8(ascii: "\n") { index += 1 }
                    } else {
                        afterCarriageReturn = true
                    }
                }
                start = index
            }
            if start < buffer.count {
                try checkLength(partial.count + buffer.count - start)
                partial.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
            }
        }
    }

    /// The unfinished last line at the end of the input, if any (its `\r` removed in `lineFeed` mode).
    mutating func finish() -> ArraySlice<UInt8>? {
        defer {
            partial.removeAll()
            afterCarriageReturn = false
        }
        guard !partial.isEmpty else { return nil }
        if endings == .lineFeed, partial.last == UInt8(ascii: "\r") { return partial.dropLast() }
        return partial[...]
    }

    private mutating func emit(_ tail: UnsafeBufferPointer<UInt8>, line: (ArraySlice<UInt8>) throws -> Void) throws {
        if partial.isEmpty {
            try checkLength(tail.count)
            try line(ArraySlice(tail))
        } else {
            try checkLength(partial.count + tail.count)
            partial.append(contentsOf: tail)
            try line(partial[...])
            partial.removeAll(keepingCapacity: true)
        }
    }

    private func checkLength(_ length: Int) throws {
        guard length > maximumLineLength else { return }
        throw ConveyError.responseTooLarge(limit: Int64(maximumLineLength), url: url, isHead: false)
    }
}
