import Foundation

/// A response body as the chain carries it up from the transport to what sits at the top: whole
/// in memory, or chunks that the top pulls from a source, with back-pressure.
///
/// A run that keeps its body in memory (`download()`, `send()`) gets it whole, as one value: no
/// stream is made. A download to a file, a stream and server-sent events get a source: the file
/// writer, the stream the app iterates or the event parser pulls each chunk, and a source that
/// is not read stops reading the network once its buffer is full. Any step on the way may pass a
/// body on, replace it, or wrap it (`observed`, `mapped`): count its bytes, tee it, transform it,
/// end a span when it ends.
enum ResponseBody: Sendable {
    /// The whole body, in memory.
    case data(Data)
    /// Chunks pulled one at a time from a source, read once.
    case stream(any BodySource)

    /// No body.
    static var empty: ResponseBody { .data(Data()) }

    /// The body when it is in memory; `nil` for a stream.
    var inMemory: Data? {
        if case .data(let data) = self { return data }
        return nil
    }

    /// The whole body in memory: a stream read to its end. Throws `ConveyError.responseTooLarge`
    /// once it passes `limit` bytes (`nil`: no limit), ending the stream there, so memory never
    /// holds more than the limit plus one chunk.
    func collected(limit: Int64?, url: URL?) async throws -> Data {
        switch self {
        case .data(let data):
            if let limit, Int64(data.count) > limit { throw ConveyError.responseTooLarge(limit: limit, url: url, isHead: false) }
            return data
        case .stream(let source):
            var collected = Data()
            do {
                while let chunk = try await source.next() {
                    if let limit, Int64(collected.count) + Int64(chunk.count) > limit {
                        throw ConveyError.responseTooLarge(limit: limit, url: url, isHead: false)
                    }
                    collected.append(chunk)
                }
            } catch {
                source.close()
                throw error
            }
            return collected
        }
    }

    /// The first `limit` bytes, for an error's body; the rest of a stream is never read: it ends.
    /// A body that breaks off early gives what arrived before.
    func prefix(_ limit: Int) async -> Data {
        switch self {
        case .data(let data):
            return data.prefix(limit)
        case .stream(let source):
            var start = Data()
            while start.count < limit, let chunk = try? await source.next() {
                start.append(chunk.prefix(limit - start.count))
            }
            source.close()
            return start
        }
    }

    /// Reads and drops a body nobody wants (a redirect's), up to `limit` bytes, so that its
    /// connection can serve another request; a longer one is ended there instead.
    func discard(upTo limit: Int) async {
        guard case .stream(let source) = self else { return }
        var dropped = 0
        while dropped <= limit, let chunk = try? await source.next() { dropped += chunk.count }
        source.close()
    }

    /// Ends the body now: a transfer a stream reads stops, and what is buffered is dropped.
    func close() {
        if case .stream(let source) = self { source.close() }
    }

    /// Whether `other` is this very body: the same source, or the same bytes in memory (the very
    /// same buffer is known at once, without comparing its bytes).
    func isSame(as other: ResponseBody) -> Bool {
        switch (self, other) {
        case (.data(let mine), .data(let theirs)):
            guard mine.count == theirs.count else { return false }
            let shared = mine.withUnsafeBytes { mineBytes in theirs.withUnsafeBytes { $0.baseAddress == mineBytes.baseAddress } }
            return shared || mine == theirs
        case (.stream(let mine), .stream(let theirs)):
            return mine === theirs
        case (.data, .stream), (.stream, .data):
            return false
        }
    }

    /// The same body, with `chunk` told of each chunk as the reader takes it and `end` told once
    /// when the body ends: `nil` when it ended whole, else why it did not (a failure, or the reader
    /// stopping before the end, `ConveyError.cancelled`). A body in memory is told at once.
    func observed(chunk: @escaping @Sendable (Data) -> Void, end: @escaping @Sendable ((any Error)?) async -> Void) async -> ResponseBody {
        switch self {
        case .data(let data):
            if !data.isEmpty { chunk(data) }
            await end(nil)
            return self
        case .stream(let source):
            return .stream(ObservedBody(source, chunk: chunk, end: end))
        }
    }

    /// The same body with each chunk replaced by what `transform` makes of it; what `transform`
    /// throws ends the body with that error.
    func mapped(_ transform: @escaping @Sendable (Data) throws -> Data) throws -> ResponseBody {
        switch self {
        case .data(let data): .data(try transform(data))
        case .stream(let source): .stream(MappedBody(source, transform: transform))
        }
    }

    /// A source that reads this body: the body's own, or one over its bytes in memory.
    func source(url: URL?) -> any BodySource {
        switch self {
        case .data(let data): DataBody(data, url: url)
        case .stream(let source): source
        }
    }
}

/// Where a streamed body's chunks come from: a transfer in flight, an answer replayed from
/// memory, or another source wrapped by a step. Read by one reader at a time.
protocol BodySource: AnyObject, Sendable {
    /// The next chunk; `nil` at the end of the body, or once it was closed. Throws how the body
    /// broke off: a Convey error naming where.
    func next() async throws -> Data?
    /// Ends the body before its end, the reader having gone: a transfer stops at once and what
    /// is buffered is dropped. The reader's next read sees the end.
    func close()
    /// Ends the body as cancelled: like `close()`, but the next read throws `ConveyError.cancelled`
    /// unless the whole body had already been taken, so a cut body never looks whole.
    func cancel()
    /// The URL the body comes from, for errors; `nil` when unknown.
    var url: URL? { get }
    /// What the exchange cost on the wire, once its transfer ended whole; `nil` for a body that
    /// comes from no transfer.
    var metrics: ExchangeMetrics? { get }
}

extension BodySource {
    var metrics: ExchangeMetrics? { nil }
}

/// A body held in memory, read as one chunk.
final class DataBody: BodySource {
    private let state: InlineLocked<State>
    let url: URL?

    private enum State: Sendable {
        case unread(Data)
        case read
        case cancelled
    }

    init(_ data: Data, url: URL?) {
        state = InlineLocked(.unread(data))
        self.url = url
    }

    func next() async throws -> Data? {
        let current = state.withLock { state in
            defer { if case .unread = state { state = .read } }
            return state
        }
        switch current {
        case .unread(let data): return data.isEmpty ? nil : data
        case .read: return nil
        case .cancelled:
            state.set(.read)
            throw ConveyError.cancelled
        }
    }

    func close() {
        state.set(.read)
    }

    func cancel() {
        state.withLock { state in if case .unread = state { state = .cancelled } }
    }
}

/// A body that failed before its first chunk: what a transform that threw on a body in memory makes.
final class FailedBody: BodySource {
    private let failure: InlineLocked<(any Error)?>
    let url: URL?

    init(_ error: any Error, url: URL?) {
        failure = InlineLocked(error)
        self.url = url
    }

    func next() async throws -> Data? {
        let error = failure.withLock { failure in
            defer { failure = nil }
            return failure
        }
        if let error { throw error }
        return nil
    }

    func close() { failure.set(nil) }

    func cancel() { failure.set(ConveyError.cancelled) }
}

/// A body whose chunks and end are told to a watcher as the reader takes them.
final class ObservedBody: BodySource {
    private let inner: any BodySource
    private let chunk: @Sendable (Data) -> Void
    private let end: @Sendable ((any Error)?) async -> Void
    /// Whether the end was told (or is being told): it is told once.
    private let ended = InlineLocked(false)

    init(_ inner: any BodySource, chunk: @escaping @Sendable (Data) -> Void, end: @escaping @Sendable ((any Error)?) async -> Void) {
        self.inner = inner
        self.chunk = chunk
        self.end = end
    }

    var url: URL? { inner.url }
    var metrics: ExchangeMetrics? { inner.metrics }

    func next() async throws -> Data? {
        let data: Data?
        do {
            data = try await inner.next()
        } catch {
            await tellEnd(error)
            throw error
        }
        if let data {
            chunk(data)
        } else {
            await tellEnd(nil)
        }
        return data
    }

    func close() {
        inner.close()
        tellEndLater(ConveyError.cancelled)
    }

    func cancel() {
        inner.cancel()
        tellEndLater(ConveyError.cancelled)
    }

    deinit {
        // Dropped unread: the transfer it reads ends, and the watcher hears so.
        if !ended.value {
            inner.close()
            let end = end
            Task { await end(ConveyError.cancelled) }
        }
    }

    private func claimEnd() -> Bool {
        ended.withLock { ended in
            defer { ended = true }
            return !ended
        }
    }

    private func tellEnd(_ error: (any Error)?) async {
        if claimEnd() { await end(error) }
    }

    /// Told from a synchronous call, where no one can wait for the watcher: in a task of its own.
    private func tellEndLater(_ error: any Error) {
        guard claimEnd() else { return }
        let end = end
        Task { await end(error) }
    }
}

/// A body whose chunks are transformed as the reader takes them.
final class MappedBody: BodySource {
    private let inner: any BodySource
    private let transform: @Sendable (Data) throws -> Data

    init(_ inner: any BodySource, transform: @escaping @Sendable (Data) throws -> Data) {
        self.inner = inner
        self.transform = transform
    }

    var url: URL? { inner.url }
    var metrics: ExchangeMetrics? { inner.metrics }

    func next() async throws -> Data? {
        guard let data = try await inner.next() else { return nil }
        do {
            return try transform(data)
        } catch {
            inner.close()
            throw error
        }
    }

    func close() { inner.close() }

    func cancel() { inner.cancel() }
}
