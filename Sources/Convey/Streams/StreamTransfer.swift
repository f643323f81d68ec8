import Foundation

/// One streamed exchange in flight: the transport's `send` running in a task of its own, feeding
/// a `StreamBuffer` that the reader drains.
///
/// Closing it (the reader cancelled or let go) ends the transfer at once. The optional total
/// timeout ends it with `ConveyError.timedOut` of kind `.total`. A failure mid-body reaches the
/// reader as a Convey error that names the URL and how far the body had got.
final class StreamTransfer: Sendable {
    /// The URL the body comes from: the request's until the head names the final one.
    var url: URL? { buffer.headURL ?? requestURL }
    private let requestURL: URL?
    private let buffer: StreamBuffer
    private let sending: Task<Void, Never>

    /// Starts `send` into a buffer of `capacity` bytes. `timeout` is the idle timeout, for errors.
    @ConveyActor
    init(url: URL?, timeout: Duration, totalTimeout: Duration?, capacity: Int,
         send: @escaping @ConveyActor (any ResponseBodySink) async throws -> ExchangeMetrics) {
        let buffer = StreamBuffer(capacity: capacity)
        self.buffer = buffer
        requestURL = url
        // The exchange and its total timeout race; whichever ends first ends the other.
        sending = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        _ = try await send(buffer)
                        buffer.finish(.finished)
                    } catch {
                        buffer.finish(.failed(StreamTransfer.describe(error, url: url, timeout: timeout, delivered: buffer.deliveredBytes)))
                    }
                }
                if let totalTimeout {
                    group.addTask {
                        guard (try? await Task.sleep(for: totalTimeout)) != nil else { return }
                        buffer.finish(.failed(ConveyError.timedOut(TimeoutFailure(kind: .total, limit: totalTimeout, url: url))))
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Waits for the response head. Cancelling the waiting task ends the transfer.
    func head() async throws -> ResponseHead {
        try await withTaskCancellationHandler {
            try await buffer.waitForHead()
        } onCancel: {
            close()
        }
    }

    /// The next chunk of the body, `nil` at its end. Cancelling the waiting task ends the
    /// transfer and throws `ConveyError.cancelled`.
    func next() async throws -> Data? {
        let chunk = try await withTaskCancellationHandler {
            try await buffer.next()
        } onCancel: {
            close()
        }
        if chunk == nil, Task.isCancelled { throw ConveyError.cancelled }
        return chunk
    }

    /// Ends the transfer at once and drops what is buffered; the reader sees the end.
    func close() {
        buffer.close()
        sending.cancel()
    }

    /// Ends the transfer at once and drops what is buffered; the reader's next read throws
    /// `ConveyError.cancelled` unless the whole body had already been taken.
    func cancel() {
        buffer.cancel()
        sending.cancel()
    }

    /// What a failure mid-stream means to the reader: a Convey error saying what and where.
    private static func describe(_ error: any Error, url: URL?, timeout: Duration, delivered: Int64) -> any Error {
        let mapped = TransportErrors.map(error, url: url, timeout: timeout)
        guard case ConveyError.transport(let failure) = mapped, delivered > 0 else { return mapped }
        return ConveyError.transport(TransportFailure(
            kind: failure.kind, code: failure.code, reason: "\(failure.reason) (the stream broke after \(delivered) bytes of the body)", url: failure.url))
    }
}
