import Foundation

/// A response body as it arrives: an `AsyncSequence` of `Data` chunks, with back-pressure.
///
/// Get one from `DownloadingTask.stream()`. Chunks come in the sizes the transport delivers them
/// (typically up to 16 KiB on curl), already decompressed. `lines` reads the body as text lines.
///
/// ```swift
/// let response = try await LogTail().stream()
/// for try await line in response.payload.lines {
///     print(line)
/// }
/// ```
///
/// - Back-pressure: at most `bufferSize` bytes (plus one chunk) wait for the reader; when they
///   do, the transport stops reading from the network until the reader catches up (see
///   Docs/streaming.md for what each transport does).
/// - One pass: the body is read once. Leaving the loop (`break`, an error) or dropping the
///   stream ends the transfer at once; iterating again yields nothing more.
/// - Cancelling the reading task, or calling `cancel()`, ends the transfer at once; the loop
///   throws `ConveyError.cancelled`, so a cut body never looks whole.
/// - A transfer that fails mid-way ends the loop with a `ConveyError` naming the URL (and, for
///   transport failures, how many body bytes had arrived), after the chunks that came before it.
public struct ResponseStream: AsyncSequence, Sendable {
    /// How many body bytes may wait for a reader by default: 1 MiB.
    public static var defaultBufferSize: Int { 1 << 20 }

    private let lifetime: StreamLifetime

    init(_ transfer: StreamTransfer) {
        lifetime = StreamLifetime(transfer)
    }

    /// Reads the chunks of the body, in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// Keeps the stream's transfer open however early a `for` loop lets go of the sequence.
        private let stream: StreamLifetime
        /// Ends the transfer when the loop is left.
        private let lifetime: StreamLifetime

        fileprivate init(_ stream: StreamLifetime) {
            self.stream = stream
            lifetime = StreamLifetime(stream.transfer)
        }

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next() async throws -> Data? {
            try await lifetime.transfer.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lifetime)
    }

    /// The URL the body comes from (after redirects).
    public var url: URL? { lifetime.transfer.url }

    /// The body as lines of text: see `ResponseLines`.
    public var lines: ResponseLines {
        ResponseLines(self)
    }

    /// Ends the transfer now; a loop reading the stream throws `ConveyError.cancelled` (once),
    /// unless it had already read the whole body.
    public func cancel() {
        lifetime.transfer.cancel()
    }
}

/// Ends a transfer when the last holder of a stream or of an iterator lets go of it.
private final class StreamLifetime: Sendable {
    let transfer: StreamTransfer

    init(_ transfer: StreamTransfer) {
        self.transfer = transfer
    }

    deinit {
        transfer.close()
    }
}
