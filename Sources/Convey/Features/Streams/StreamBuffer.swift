import Foundation

/// The sink behind a `ResponseStream`: a bounded queue of body chunks between the transport and
/// the reader.
///
/// It refuses bytes once `capacity` are waiting (the transport then pauses) and asks the transport
/// to go on once the reader has taken enough that the refused bytes fit, with half the capacity free.
/// So memory holds at most `capacity` plus one chunk, whatever the producer does.
final class StreamBuffer: ResponseBodySink, @unchecked Sendable {
    /// How the transfer ended, once it has.
    enum End {
        case finished
        case failed(any Error)
    }

    let capacity: Int
    private let lock = NSLock()
    private var head: ResponseHead?
    private var headWaiter: CheckedContinuation<ResponseHead, any Error>?
    private var chunks: [Data] = []
    private var firstChunk = 0
    private var bufferedBytes = 0
    /// The size of the bytes last refused: the transport offers them again once they fit.
    private var refusedBytes = 0
    private var pendingResume: (@Sendable () -> Void)?
    private var end: End?
    /// Whether the reader has gone: offers throw and the reader sees the end.
    private var closed = false
    /// Whether it was closed by `cancel()` and the reader has yet to learn so from `next()`.
    private var cancellationUnreported = false
    private var reader: CheckedContinuation<Void, Never>?
    /// Body bytes the reader has taken, for saying where a failure happened.
    private(set) var deliveredBytes: Int64 = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    // MARK: The transport's side

    /// A reader takes chunks at its own pace: only `capacity` bytes may wait for it.
    var needsBackPressure: Bool { true }

    func receive(_ head: ResponseHead) throws {
        let waiter = try lock.withLock { () throws -> CheckedContinuation<ResponseHead, any Error>? in
            if closed { throw CancellationError() }
            self.head = head
            defer { headWaiter = nil }
            return headWaiter
        }
        waiter?.resume(returning: head)
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        let waiting = try lock.withLock { () throws -> CheckedContinuation<Void, Never>?? in
            if closed { throw CancellationError() }
            guard bufferedBytes == 0 || bufferedBytes + bytes.count <= capacity else {
                refusedBytes = bytes.count
                return .none
            }
            chunks.append(Data(bytes))
            bufferedBytes += bytes.count
            defer { reader = nil }
            return .some(reader)
        }
        guard let waiting else { return false }
        waiting?.resume()
        return true
    }

    func whenReady(_ resume: @escaping @Sendable () -> Void) {
        let now = lock.withLock {
            if closed || hasRoom { return true }
            pendingResume = resume
            return false
        }
        if now { resume() }
    }

    /// Whether the refused bytes fit now, with at least half the capacity free.
    private var hasRoom: Bool {
        bufferedBytes == 0 || (bufferedBytes + refusedBytes <= capacity && bufferedBytes <= capacity / 2)
    }

    /// Records how the transfer ended; the first end counts.
    func finish(_ outcome: End) {
        let (headWaiter, reader) = lock.withLock {
            if end == nil { end = outcome }
            defer {
                self.headWaiter = nil
                self.reader = nil
            }
            return (self.headWaiter, self.reader)
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
            let outcome: Result<ResponseHead, any Error>? = lock.withLock {
                if let head { return .success(head) }
                if closed { return .failure(CancellationError()) }
                switch end {
                case .failed(let error): return .failure(error)
                case .finished: return .failure(URLError(.badServerResponse))
                case nil:
                    headWaiter = continuation
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
            let step: Step = lock.withLock { take() }
            switch step {
            case .chunk(let data, let resume):
                resume?()
                return data
            case .ended: return nil
            case .failed(let error): throw error
            case .wait:
                await withCheckedContinuation { continuation in
                    let ready = lock.withLock {
                        guard chunks.count == firstChunk, end == nil, !closed else { return true }
                        reader = continuation
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

    /// Takes the next chunk under the lock, with the transport's resume when it may go on.
    private func take() -> Step {
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
            if pendingResume != nil, hasRoom {
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
        let (headWaiter, reader, resume) = lock.withLock {
            let complete: Bool = if case .finished = end { firstChunk == chunks.count } else { false }
            if reportingCancellation, !closed, !complete { cancellationUnreported = true }
            closed = true
            chunks.removeAll()
            firstChunk = 0
            bufferedBytes = 0
            defer {
                self.headWaiter = nil
                self.reader = nil
                pendingResume = nil
            }
            return (self.headWaiter, self.reader, pendingResume)
        }
        headWaiter?.resume(throwing: CancellationError())
        reader?.resume()
        // A paused transport wakes, offers again and learns that the reader has gone.
        resume?()
    }

    /// The final URL, once the head has arrived.
    var headURL: URL? { lock.withLock { head?.url } }
}
