import Foundation

/// Reads a body's lines of text from its chunks, for `ResponseStream<String>`: lines end at `\n`
/// or `\r\n`, found across chunk boundaries, and come without their ending.
struct LineReader: StreamReader {
    private var chunks: ResponseStream<Data>.AsyncIterator
    private var splitter: LineSplitter
    private var ready = ReadyQueue<String>()
    private var ended = false

    init(_ chunks: ResponseStream<Data>.AsyncIterator, maximumLineLength: Int, url: URL?) {
        self.chunks = chunks
        splitter = LineSplitter(endings: .lineFeed, maximumLineLength: maximumLineLength, url: url)
    }

    /// The next line, or `nil` after the last one.
    mutating func next() async throws -> String? {
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
