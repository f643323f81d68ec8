import Foundation

/// The sink behind every streamed body (`StreamTransfer`): a bounded queue of body chunks between
/// the transport and the reader.
///
/// It refuses bytes once `capacity` are waiting (the transport then pauses) and asks the transport
/// to go on once the reader has taken enough that the refused bytes fit, with half the capacity free.
/// So memory holds at most `capacity` plus one chunk, whatever the producer does.
final class StreamBuffer: ResponseBodySink, Sendable {
    /// How the transfer ended, once it has.
    enum End: Sendable {
        case finished
        case failed(any Error)
    }

    let capacity: Int
    /// Whether the reader is Convey's own, keeping the pace of a disk (a download's writer).
    private let readerKeepsPace: Bool
    private let queue = InlineLocked(Queue())

    /// What the transport and the reader share.
    private struct Queue: Sendable {
        var head: ResponseHead?
        var headWaiter: CheckedContinuation<ResponseHead, any Error>?
        var chunks: [Data] = []
        var firstChunk = 0
        var bufferedBytes = 0
        /// The size of the bytes last refused: the transport offers them again once they fit.
        var refusedBytes = 0
        var pendingResume: (@Sendable () -> Void)?
        var end: End?
        /// Whether the reader has gone: offers throw and the reader sees the end.
        var closed = false
        /// Whether it was closed by `cancel()` and the reader has yet to learn so from `next()`.
        var cancellationUnreported = false
        var reader: CheckedContinuation<Void, Never>?
        /// Body bytes the reader has taken, for saying where a failure happened.
        var deliveredBytes: Int64 = 0

        /// Whether the refused bytes fit now, with at least half of `capacity` free.
        func hasRoom(capacity: Int) -> Bool {
            bufferedBytes == 0 || (bufferedBytes + refusedBytes <= capacity && bufferedBytes <= capacity / 2)
        }

        /// Takes the next chunk, with the transport's resume when it may go on.
        mutating func take(capacity: Int) -> Step {
            if closed {
                guard cancellationUnreported else { return .ended }
                cancellationUnreported = false
                return .failed(ConveyError.cancelled)
            }
            if firstChunk < chunks.count {
                let data = chunks[firstChunk]
                firstChunk += 1
                bufferedBytes -= data.count
                deliveredBytes += Int64(data.count)
                if firstChunk == chunks.count {
                    chunks.removeAll(keepingCapacity: true)
                    firstChunk = 0
                } else if firstChunk >= 64 {
                    chunks.removeFirst(firstChunk)
                    firstChunk = 0
                }
                var resume: (@Sendable () -> Void)?
                if pendingResume != nil, hasRoom(capacity: capacity) {
                    resume = pendingResume
                    pendingResume = nil
                }
                return .chunk(data, resume: resume)
            }
            switch end {
            case .failed(let error):
                // Reported once; afterwards the stream has simply ended.
                end = .finished
                return .failed(error)
            case .finished: return .ended
            case nil: return .wait
            }
        }
    }

    /// Body bytes the reader has taken, for saying where a failure happened.
    var deliveredBytes: Int64 { queue.withLock { $0.deliveredBytes } }

    init(capacity: Int, readerKeepsPace: Bool = false) {
        self.capacity = max(capacity, 1)
        self.readerKeepsPace = readerKeepsPace
    }

    // MARK: The transport's side

    /// An app's reader takes chunks at its own pace, so only `capacity` bytes may wait for it: the
    /// transport must pause. Convey's own reader keeps a disk's pace, which a transport that
    /// cannot pause may wait for instead.
    var needsBackPressure: Bool { !readerKeepsPace }

    func receive(_ head: ResponseHead) throws {
        let waiter = try queue.withLock { queue throws -> CheckedContinuation<ResponseHead, any Error>? in
            if queue.closed { throw CancellationError() }
            queue.head = head
            defer { queue.headWaiter = nil }
            return queue.headWaiter
        }
        waiter?.resume(returning: head)
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        let waiting = try queue.withLock { queue throws -> CheckedContinuation<Void, Never>?? in
            if queue.closed { throw CancellationError() }
            guard queue.bufferedBytes == 0 || queue.bufferedBytes + bytes.count <= capacity else {
                queue.refusedBytes = bytes.count
                return .none
            }
            queue.chunks.append(Data(bytes))
            queue.bufferedBytes += bytes.count
            defer { queue.reader = nil }
            return .some(queue.reader)
        }
        guard let waiting else { return false }
        waiting?.resume()
        return true
    }

    func whenReady(_ resume: @escaping @Sendable () -> Void) {
        let now = queue.withLock { queue in
            if queue.closed || queue.hasRoom(capacity: capacity) { return true }
            queue.pendingResume = resume
            return false
        }
        if now { resume() }
    }

    /// Records how the transfer ended; the first end counts.
    func finish(_ outcome: End) {
        let (headWaiter, reader) = queue.withLock { queue in
            if queue.end == nil { queue.end = outcome }
            defer {
                queue.headWaiter = nil
                queue.reader = nil
            }
            return (queue.headWaiter, queue.reader)
        }
        if let headWaiter {
            if case .failed(let error) = outcome {
                headWaiter.resume(throwing: error)
            } else {
                headWaiter.resume(throwing: URLError(.badServerResponse))
            }
        }
        reader?.resume()
    }

    // MARK: The reader's side

    /// Waits for the response head; throws how the transfer failed when it ended without one.
    func waitForHead() async throws -> ResponseHead {
        try await withCheckedThrowingContinuation { continuation in
            let outcome: Result<ResponseHead, any Error>? = queue.withLock { queue in
                if let head = queue.head { return .success(head) }
                if queue.closed { return .failure(CancellationError()) }
                switch queue.end {
                case .failed(let error): return .failure(error)
                case .finished: return .failure(URLError(.badServerResponse))
                case nil:
                    queue.headWaiter = continuation
                    return nil
                }
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// The next chunk; `nil` at the end of the body or once the reader closed. Throws how the
    /// transfer failed, once the chunks before the failure are taken.
    func next() async throws -> Data? {
        while true {
            let step = queue.withLock { $0.take(capacity: capacity) }
            switch step {
            case .chunk(let data, let resume):
                resume?()
                return data
            case .ended: return nil
            case .failed(let error): throw error
            case .wait:
                await withCheckedContinuation { continuation in
                    let ready = queue.withLock { queue in
                        guard queue.chunks.count == queue.firstChunk, queue.end == nil, !queue.closed else { return true }
                        queue.reader = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
        }
    }

    private enum Step {
        case chunk(Data, resume: (@Sendable () -> Void)?)
        case ended
        case failed(any Error)
        case wait
    }

    /// Ends the body before its end: like `close()`, but the next `next()` throws
    /// `ConveyError.cancelled`, so a reader cannot take a cut body for a whole one. A body already
    /// complete and fully taken stays complete.
    func cancel() {
        close(reportingCancellation: true)
    }

    /// The reader has gone: drops what is buffered, refuses whatever comes, wakes every waiter.
    func close() {
        close(reportingCancellation: false)
    }

    private func close(reportingCancellation: Bool) {
        let (headWaiter, reader, resume) = queue.withLock { queue in
            let complete: Bool = if case .finished = queue.end { queue.firstChunk == queue.chunks.count } else { false }
            if reportingCancellation, !queue.closed, !complete { queue.cancellationUnreported = true }
            queue.closed = true
            queue.chunks.removeAll()
            queue.firstChunk = 0
            queue.bufferedBytes = 0
            defer {
                queue.headWaiter = nil
                queue.reader = nil
                queue.pendingResume = nil
            }
            return (queue.headWaiter, queue.reader, queue.pendingResume)
        }
        headWaiter?.resume(throwing: CancellationError())
        reader?.resume()
        // A paused transport wakes, offers again and learns that the reader has gone.
        resume?()
    }

    /// The final URL, once the head has arrived.
    var headURL: URL? { queue.withLock { $0.head?.url } }
}
