import Foundation

/// One streamed exchange in flight: the transport's `send` running in a task of its own, feeding
/// a `StreamBuffer` that the reader drains. The source of every streamed body the transport step
/// passes up the chain.
///
/// Closing it (the reader gone, the body dropped unread) ends the transfer at once. A failure
/// mid-body reaches the reader as a Convey error that names the URL and how far the body had got.
final class StreamTransfer: BodySource {
    /// The URL the body comes from: the request's until the head names the final one.
    var url: URL? { buffer.headURL ?? requestURL }
    private let requestURL: URL?
    private let buffer: StreamBuffer
    private let sending: Task<Void, Never>
    /// What the exchange cost on the wire, once the transport's send returned.
    private let measured: Measured

    /// Starts `send` into a buffer of `capacity` bytes, in a task of its own. `timeout` is the
    /// idle timeout, for errors. `readerKeepsPace` when Convey itself reads the body (a download's
    /// file writer) rather than the app: a transport that cannot pause may then wait for it.
    init(url: URL?, timeout: Duration, capacity: Int, readerKeepsPace: Bool = false,
         send: @escaping @Sendable (any ResponseBodySink) async throws -> ExchangeMetrics) {
        let buffer = StreamBuffer(capacity: capacity, readerKeepsPace: readerKeepsPace)
        let measured = Measured()
        self.measured = measured
        self.buffer = buffer
        requestURL = url
        sending = Task {
            do {
                measured.metrics.set(try await send(buffer))
                buffer.finish(.finished)
            } catch {
                buffer.finish(.failed(StreamTransfer.describe(error, url: url, timeout: timeout, delivered: buffer.deliveredBytes)))
            }
        }
    }

    deinit {
        close()
    }

    /// What the exchange cost on the wire, once the transfer ended whole.
    var metrics: ExchangeMetrics? { measured.metrics.value }

    /// The metrics the sending task hands over when the transport's send returns.
    private final class Measured: Sendable {
        let metrics = InlineLocked<ExchangeMetrics?>(nil)
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
        guard case ConveyError.transport(let failure, let failingURL, let code, let reason) = mapped, delivered > 0 else { return mapped }
        return ConveyError.transport(failure, url: failingURL, code: code, reason: "\(reason) (the stream broke after \(delivered) bytes of the body)")
    }
}

extension StreamTransfer: ExchangeCancelling {
    /// The run stopped while waiting for the head: the transfer ends.
    func cancelExchange() { close() }
}
