import Foundation

/// One streamed exchange in flight: the transport's `send` running in a task of its own, feeding
/// a `StreamBuffer` that the reader drains.
///
/// Closing it (the reader cancelled or let go) ends the transfer at once. A run's deadline it
/// keeps (`keep`) ends it with `ConveyError.totalTimedOut`. A failure mid-body
/// reaches the reader as a Convey error that names the URL and how far the body had got.
final class StreamTransfer: Sendable {
    /// The URL the body comes from: the request's until the head names the final one.
    var url: URL? { buffer.headURL ?? requestURL }
    private let requestURL: URL?
    private let buffer: StreamBuffer
    private let sending: Task<Void, Never>
    private let deadlineWatch: StreamDeadline

    /// Starts `send` into a buffer of `capacity` bytes, in a task of its own. `timeout` is the
    /// idle timeout, for errors.
    init(url: URL?, timeout: Duration, capacity: Int,
         send: @escaping @Sendable (any ResponseBodySink) async throws -> ExchangeMetrics) {
        let buffer = StreamBuffer(capacity: capacity)
        let deadlineWatch = StreamDeadline(buffer: buffer, url: url)
        self.buffer = buffer
        self.deadlineWatch = deadlineWatch
        requestURL = url
        sending = Task {
            do {
                _ = try await send(buffer)
                buffer.finish(.finished)
            } catch {
                buffer.finish(.failed(StreamTransfer.describe(error, url: url, timeout: timeout, delivered: buffer.deliveredBytes)))
            }
            deadlineWatch.transferEnded()
        }
        deadlineWatch.watchSending(sending)
    }

    /// Keeps the run's `deadline` over the rest of the body: when it passes, the transfer ends and
    /// the reader gets `ConveyError.totalTimedOut`.
    func keep(_ deadline: RunDeadline) {
        deadlineWatch.watch(deadline)
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

/// A stream's watch over its run's deadline once the run has handed the stream over: registered
/// with the clock's alarm until the deadline passes or the transfer ends.
private final class StreamDeadline: DeadlineWatcher, Sendable {
    private let buffer: StreamBuffer
    private let url: URL?
    private let watch = InlineLocked(Watch())

    private struct Watch: Sendable {
        var sending: Task<Void, Never>?
        var deadline: RunDeadline?
        var ended = false
    }

    init(buffer: StreamBuffer, url: URL?) {
        self.buffer = buffer
        self.url = url
    }

    func watchSending(_ task: Task<Void, Never>) {
        watch.withLock { if !$0.ended { $0.sending = task } }
    }

    func watch(_ deadline: RunDeadline) {
        let watches = watch.withLock { watch in
            guard !watch.ended else { return false }
            watch.deadline = deadline
            return true
        }
        if watches { deadline.clock.deadlineAlarm.watch(self, until: deadline.instant, on: deadline.clock) }
    }

    func transferEnded() {
        let deadline = watch.withLock { watch in
            watch.ended = true
            watch.sending = nil
            return watch.deadline
        }
        if let deadline { deadline.clock.deadlineAlarm.forget(self) }
    }

    func deadlinePassed(at now: ContinuousClock.Instant) {
        let (deadline, sending) = watch.withLock { ($0.ended ? nil : $0.deadline, $0.sending) }
        guard let deadline, now >= deadline.instant else { return }
        buffer.finish(.failed(ConveyError.totalTimedOut(limit: deadline.limit, url: buffer.headURL ?? url)))
        sending?.cancel()
    }
}

extension StreamTransfer: ExchangeCancelling, AttemptHold {
    /// The run stopped while waiting for the head: the transfer ends.
    func cancelExchange() { close() }

    /// The attempt failed or the run stopped with the stream in hand: the transfer ends.
    func release() { close() }
}
