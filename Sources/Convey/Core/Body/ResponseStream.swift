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
    /// The body read by a stream of chunks or lines; `nil` for events, which connect as they are
    /// read, and for a body held in memory.
    let body: BodyLifetime?
    /// The body when it is held in memory, with its URL: read as one chunk, with no stream made.
    let memory: (data: Data, url: URL?)?
    /// Makes the reader of one loop.
    private let makeReader: @Sendable () -> any StreamReader<Element>

    init(body: BodyLifetime?, memory: (data: Data, url: URL?)? = nil, makeReader: @escaping @Sendable () -> any StreamReader<Element>) {
        self.body = body
        self.memory = memory
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

    /// The chunks of `source`, which ends when the last holder of the stream lets go of it: the
    /// stream a run hands its caller.
    init(_ source: any BodySource) {
        self.init(lifetime: BodyLifetime(source))
    }

    /// The chunks of a body as the chain carries it: one chunk for a body in memory. `owning` when
    /// the stream is the body's last holder (the run's payload), so that letting go of it ends the
    /// body; a step's view of a body it hands on (`ServerResponse.body`, a wrapper) does not.
    init(_ body: ResponseBody, url: URL?, owning: Bool = true) {
        switch body {
        case .data(let data): self.init(memory: data, url: url)
        case .stream(let source): self.init(lifetime: BodyLifetime(source, endsWithLastHolder: owning))
        }
    }

    init(lifetime: BodyLifetime) {
        self.init(body: lifetime) { ChunkReader(lifetime) }
    }

    /// A body held in memory, read as one chunk.
    init(memory data: Data, url: URL?) {
        self.init(body: nil, memory: (data, url)) { ChunkReader(BodyLifetime(DataBody(data, url: url))) }
    }

    /// The body as the chain carries it: in memory, or the source this stream reads; `nil` for events.
    var chainBody: ResponseBody? {
        if let memory { return .data(memory.data) }
        return body.map { .stream($0.source) }
    }

    /// The URL the body comes from (after redirects).
    public var url: URL? { memory?.url ?? body?.source.url }

    /// Ends the transfer now; a loop reading the stream throws `ConveyError.cancelled` (once),
    /// unless it had already read the whole body.
    public func cancel() {
        body?.source.cancel()
    }

    /// The same body, with `chunk` told of each chunk as the reader takes it and `end` told once
    /// when the body ends: `nil` when it ended whole, else why not (a failure, or
    /// `ConveyError.cancelled` when the reader stopped before the end). For a step that counts a
    /// body's bytes, tees it somewhere or ends a measurement when it ends; `chunk` and `end` run in
    /// the reader's task, so keep them quick.
    ///
    /// A body held in memory (`download()`, `send()`) is told at once, and stays in memory.
    public func observed(chunk: @escaping @Sendable (Data) -> Void = { _ in },
                         end: @escaping @Sendable ((any Error)?) -> Void = { _ in }) -> ResponseStream<Data> {
        if let memory {
            if !memory.data.isEmpty { chunk(memory.data) }
            end(nil)
            return self
        }
        guard let source = body?.source else { return self }
        return ResponseStream(.stream(ObservedBody(source, chunk: chunk, end: { error in end(error) })), url: nil, owning: false)
    }

    /// The same body with each chunk replaced by what `transform` makes of it, as the reader
    /// takes it: for a step that decodes or rewrites a body on its way. What `transform` throws
    /// ends the body with that error.
    ///
    /// A body held in memory is transformed at once, as one chunk, and stays in memory.
    public func mapChunks(_ transform: @escaping @Sendable (Data) throws -> Data) -> ResponseStream<Data> {
        if let memory {
            guard !memory.data.isEmpty else { return self }
            do {
                return ResponseStream(memory: try transform(memory.data), url: memory.url)
            } catch {
                return ResponseStream(.stream(FailedBody(error, url: memory.url)), url: nil, owning: false)
            }
        }
        guard let source = body?.source else { return self }
        return ResponseStream(.stream(MappedBody(source, transform: transform)), url: nil, owning: false)
    }
}

/// Reads the chunks of a body, keeping it open while it reads.
struct ChunkReader: StreamReader {
    /// Keeps the stream's body open however early a `for` loop lets go of the sequence.
    private let stream: BodyLifetime
    /// Ends the body when the loop is left.
    private let lifetime: BodyLifetime

    init(_ stream: BodyLifetime) {
        self.stream = stream
        lifetime = BodyLifetime(stream.source)
    }

    mutating func next() async throws -> Data? {
        try await lifetime.source.next()
    }
}

/// Ends a body when the last holder of a stream or of a reader lets go of it, unless the stream
/// is only a view of a body that goes on up the chain.
final class BodyLifetime: Sendable {
    let source: any BodySource
    private let endsWithLastHolder: Bool

    init(_ source: any BodySource, endsWithLastHolder: Bool = true) {
        self.source = source
        self.endsWithLastHolder = endsWithLastHolder
    }

    deinit {
        if endsWithLastHolder { source.close() }
    }
}
