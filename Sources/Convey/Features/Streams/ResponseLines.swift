import Foundation

/// A response body as lines of text: an `AsyncSequence` of `String`, read from a `ResponseStream`.
///
/// Lines end at `\n` or `\r\n` (found across chunk boundaries) and come without their ending; a
/// last line without one is still delivered. Text is UTF-8; invalid bytes become U+FFFD. A line
/// longer than `maximumLineLength` bytes ends the sequence with `ConveyError.responseTooLarge`,
/// so a body that never ends a line cannot fill memory.
public struct ResponseLines: AsyncSequence, Sendable {
    /// The longest line accepted by default: 1 MiB.
    public static var defaultMaximumLineLength: Int { 1 << 20 }

    private let stream: ResponseStream
    private let maximumLineLength: Int

    init(_ stream: ResponseStream, maximumLineLength: Int = ResponseLines.defaultMaximumLineLength) {
        self.stream = stream
        self.maximumLineLength = maximumLineLength
    }

    /// The same lines with another length limit, in bytes.
    public func limited(to maximumLineLength: Int) -> ResponseLines {
        ResponseLines(stream, maximumLineLength: maximumLineLength)
    }

    /// Reads the lines in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var chunks: ResponseStream.AsyncIterator
        private var splitter: LineSplitter
        private var ready = ReadyQueue<String>()
        private var ended = false

        init(_ chunks: ResponseStream.AsyncIterator, maximumLineLength: Int, url: URL?) {
            self.chunks = chunks
            splitter = LineSplitter(endings: .lineFeed, maximumLineLength: maximumLineLength, url: url)
        }

        /// The next line, or `nil` after the last one.
        public mutating func next() async throws -> String? {
            while true {
                if let item = ready.popFirst() { return item }
                if ended { return nil }
                if let chunk = try await chunks.next() {
                    try splitter.split(chunk) { ready.append(String(decoding: $0, as: UTF8.self)) }
                } else {
                    ended = true
                    if let last = splitter.finish() { ready.append(String(decoding: last, as: UTF8.self)) }
                }
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream.makeAsyncIterator(), maximumLineLength: maximumLineLength, url: stream.url)
    }
}
