import Foundation

/// A response body as it arrives, read with `for try await`, with back-pressure: its chunks
/// (`ResponseStream<Data>`, from `DownloadingTask.stream()`), its lines of text
/// (`ResponseStream<String>`, the chunks' `lines`), or its server-sent events
/// (`ResponseStream<ServerSentEvent>`, from `DownloadingTask.events(…)`, which reconnects).
///
/// ```swift
/// let response = try await LogTail().stream()
/// for try await line in response.payload.lines {
///     print(line)
/// }
/// ```
///
/// Chunks come in the sizes the transport delivers them (typically up to 16 KiB on curl),
/// already decompressed.
/// - Back-pressure: at most `bufferSize` bytes (plus one chunk) wait for the reader; when they
///   do, the transport stops reading from the network until the reader catches up (see
///   Docs/streaming.md for what each transport does).
/// - One pass: the body is read once. Leaving the loop (`break`, an error) or dropping the
///   stream ends the transfer at once; iterating again yields nothing more.
/// - Cancelling the reading task, or calling `cancel()`, ends the transfer at once; the loop
///   throws `ConveyError.cancelled`, so a cut body never looks whole.
/// - A transfer that fails mid-way ends the loop with a `ConveyError` naming the URL (and, for
///   transport failures, how many body bytes had arrived), after the elements that came before it.
///
/// Lines end at `\n` or `\r\n` (found across chunk boundaries) and come without their ending; a
/// last line without one is still delivered. Text is UTF-8; invalid bytes become U+FFFD. A line
/// longer than its limit (`limited(to:)`, 1 MiB unless set) ends the loop with
/// `ConveyError.responseTooLarge`, so a body that never ends a line cannot fill memory.
///
/// Events: see `DownloadingTask.events(lastEventID:reconnects:reconnectionTime:minimumReconnectionTime:maximumReconnectionTime:maximumConsecutiveFailures:maximumEventSize:)`
/// and Docs/streaming.md.
public struct ResponseStream<Element: Sendable>: AsyncSequence, Sendable {
    /// The transfer read by a stream of chunks or lines; `nil` for events, which connect as they are read.
    private let transfer: StreamLifetime?
    /// Makes the reader of one loop.
    private let makeReader: @Sendable () -> any StreamReader<Element>

    init(transfer: StreamLifetime?, makeReader: @escaping @Sendable () -> any StreamReader<Element>) {
        self.transfer = transfer
        self.makeReader = makeReader
    }

    /// Reads the elements in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var reader: any StreamReader<Element>

        fileprivate init(_ reader: any StreamReader<Element>) {
            self.reader = reader
        }

        /// The next element, or `nil` at the end.
        public mutating func next() async throws -> Element? {
            try await reader.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(makeReader())
    }
}

/// What reads the elements of one loop over a `ResponseStream`.
protocol StreamReader<Element> {
    associatedtype Element
    /// The next element, or `nil` at the end.
    mutating func next() async throws -> Element?
}

extension ResponseStream where Element == Data {
    /// How many body bytes may wait for a reader by default: 1 MiB.
    public static var defaultBufferSize: Int { 1 << 20 }

    /// The chunks of `transfer`'s body.
    init(_ transfer: StreamTransfer) {
        self.init(lifetime: StreamLifetime(transfer))
    }

    fileprivate init(lifetime: StreamLifetime) {
        self.init(transfer: lifetime) { ChunkReader(lifetime) }
    }

    /// The URL the body comes from (after redirects).
    public var url: URL? { transfer?.transfer.url }

    /// The body as lines of text, at most 1 MiB each (`limited(to:)` sets another limit).
    public var lines: ResponseStream<String> {
        ResponseStream<String>(lines: self, maximumLineLength: ResponseStream<String>.defaultMaximumLineLength)
    }

    /// Ends the transfer now; a loop reading the stream throws `ConveyError.cancelled` (once),
    /// unless it had already read the whole body.
    public func cancel() {
        transfer?.transfer.cancel()
    }
}

extension ResponseStream where Element == String {
    /// The longest line accepted by default: 1 MiB.
    public static var defaultMaximumLineLength: Int { 1 << 20 }

    /// The lines of the body `chunks` reads.
    fileprivate init(lines chunks: ResponseStream<Data>, maximumLineLength: Int) {
        self.init(transfer: chunks.transfer) {
            LineReader(chunks.makeAsyncIterator(), maximumLineLength: maximumLineLength, url: chunks.url)
        }
    }

    /// The same lines with another length limit, in bytes.
    public func limited(to maximumLineLength: Int) -> ResponseStream<String> {
        // Every stream of lines reads a transfer.
        guard let transfer else { return self }
        return ResponseStream(lines: ResponseStream<Data>(lifetime: transfer), maximumLineLength: maximumLineLength)
    }
}

/// Reads the chunks of a transfer's body, keeping the transfer open while it reads.
struct ChunkReader: StreamReader {
    /// Keeps the stream's transfer open however early a `for` loop lets go of the sequence.
    private let stream: StreamLifetime
    /// Ends the transfer when the loop is left.
    private let lifetime: StreamLifetime

    init(_ stream: StreamLifetime) {
        self.stream = stream
        lifetime = StreamLifetime(stream.transfer)
    }

    mutating func next() async throws -> Data? {
        try await lifetime.transfer.next()
    }
}

/// Ends a transfer when the last holder of a stream or of a reader lets go of it.
final class StreamLifetime: Sendable {
    let transfer: StreamTransfer

    init(_ transfer: StreamTransfer) {
        self.transfer = transfer
    }

    deinit {
        transfer.close()
    }
}
