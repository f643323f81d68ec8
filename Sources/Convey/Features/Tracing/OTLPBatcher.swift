import Foundation

/// The exporter's queue and its worker: spans wait in a bounded queue, a task of the exporter's
/// own takes them out in batches (full ones at once, the rest when the interval passes or a flush
/// asks) and posts each, retrying as the OTLP specification says. Nothing here waits for the
/// network while holding the lock, and `enqueue`, the one call runs make, never waits at all.
final class OTLPBatcher: Sendable {
    let delivery: OTLPDelivery
    private let serviceName: String
    private let queueLimit: Int
    private let batchSize: Int
    private let interval: Duration
    private let state = Locked(State())
    private let tasks = Locked<[Task<Void, Never>]>([])

    private struct State: Sendable {
        var queue: [TraceSpan] = []
        /// The spans of the batch being sent.
        var inFlight = 0
        /// Spans ever queued, and how many of them were delivered or dropped since.
        var accepted = 0
        var settled = 0
        var delivered = 0
        var dropped = 0
        /// The interval passed since the last batch.
        var due = false
        /// Flushes waiting: each one's number, what it waits for, and whether batches get one try only (shutdown).
        var flushWaiters: [(id: Int, target: Int, resume: CheckedContinuation<Void, Never>)] = []
        var flushes = 0
        var triesOnce = false
        var started = false
        var stopped = false
        /// The worker, waiting for something to do.
        var idleWorker: CheckedContinuation<Void, Never>?

        var hasBatch: Bool { !queue.isEmpty }
    }

    /// The exporter's figures.
    struct Counts: Sendable {
        var delivered: Int
        var dropped: Int
        var queued: Int
    }

    init(delivery: OTLPDelivery, serviceName: String, queueLimit: Int, batchSize: Int, interval: Duration) {
        self.delivery = delivery
        self.serviceName = serviceName
        self.queueLimit = queueLimit
        self.batchSize = batchSize
        self.interval = interval
    }

    var counts: Counts {
        state.withLock { Counts(delivered: $0.delivered, dropped: $0.dropped, queued: $0.queue.count) }
    }

    /// Queues what fits of `spans`, drops and counts the rest; wakes the worker for a full batch.
    func enqueue(_ spans: [TraceSpan]) {
        guard !spans.isEmpty else { return }
        let (wake, start) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Bool) in
            guard !state.stopped else {
                state.dropped += spans.count
                return (nil, false)
            }
            let taken = min(queueLimit - state.queue.count, spans.count)
            state.queue.append(contentsOf: spans.prefix(taken))
            state.accepted += taken
            state.dropped += spans.count - taken
            let start = !state.started
            state.started = true
            guard state.queue.count >= batchSize, let idle = state.idleWorker else { return (nil, start) }
            state.idleWorker = nil
            return (idle, start)
        }
        wake?.resume()
        if start { startWorking() }
    }

    /// Returns once every span queued before the call is delivered or dropped, or once the
    /// calling task is cancelled; with `tryingOnce`, batches from now on get one try each, and a
    /// batch waiting to be tried again is tried at once, one last time.
    func flush(tryingOnce: Bool) async {
        if tryingOnce {
            state.withLock { $0.triesOnce = true }
            delivery.stopRetrying()
        }
        let id = state.withLock { state in
            state.flushes += 1
            return state.flushes
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (resume: CheckedContinuation<Void, Never>) in
                let (done, wake) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                    guard state.settled < state.accepted, !state.stopped, !Task.isCancelled else { return (true, nil) }
                    state.flushWaiters.append((id, state.accepted, resume))
                    defer { state.idleWorker = nil }
                    return (false, state.idleWorker)
                }
                if done { resume.resume() }
                wake?.resume()
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.flushWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.flushWaiters.remove(at: index).resume
            }
            waiter?.resume()
        }
    }

    /// Stops the worker and the interval's timer, drops what is queued and the batch being sent
    /// (whose post is cancelled), and releases every flush.
    func stop() {
        let (waiters, idle) = state.withLock { state -> ([CheckedContinuation<Void, Never>], CheckedContinuation<Void, Never>?) in
            guard !state.stopped else { return ([], nil) }
            state.stopped = true
            state.dropped += state.queue.count + state.inFlight
            state.settled += state.queue.count + state.inFlight
            state.queue = []
            state.inFlight = 0
            defer {
                state.flushWaiters = []
                state.idleWorker = nil
            }
            return (state.flushWaiters.map(\.resume), state.idleWorker)
        }
        idle?.resume()
        for waiter in waiters { waiter.resume() }
        for task in tasks.value { task.cancel() }
    }

    /// Starts the worker and the timer: detached, so that they carry none of the task-local
    /// values of the run that queued the first span (its trace, its HAR scope).
    private func startWorking() {
        let worker = Task.detached { [self] in await work() }
        let timer = Task.detached { [self, interval] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                tick()
            }
        }
        tasks.withLock { $0 += [worker, timer] }
        if state.value.stopped { worker.cancel(); timer.cancel() }
    }

    /// The interval passed: a batch is due when spans wait.
    private func tick() {
        let idle = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.hasBatch else { return nil }
            state.due = true
            defer { state.idleWorker = nil }
            return state.idleWorker
        }
        idle?.resume()
    }

    private func work() async {
        while let (batch, triesOnce) = await nextBatch() {
            let delivered = await deliver(batch, triesOnce: triesOnce)
            settle(batch.count, delivered: delivered)
        }
    }

    /// The next batch to send, waiting until one is due; `nil` once stopped.
    private func nextBatch() async -> ([TraceSpan], Bool)? {
        while true {
            enum Next { case batch([TraceSpan], Bool), stopped, wait }
            let next = state.withLock { state -> Next in
                if state.stopped { return .stopped }
                guard isDue(state) else { return .wait }
                let batch = Array(state.queue.prefix(batchSize))
                state.queue.removeFirst(batch.count)
                state.inFlight = batch.count
                if state.queue.isEmpty { state.due = false }
                return .batch(batch, state.triesOnce)
            }
            switch next {
            case .batch(let batch, let triesOnce): return (batch, triesOnce)
            case .stopped: return nil
            case .wait:
                await withCheckedContinuation { (resume: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state in
                        if state.stopped || isDue(state) { return true }
                        state.idleWorker = resume
                        return false
                    }
                    if ready { resume.resume() }
                }
            }
        }
    }

    /// Whether a batch goes out now: a full one, or any once the interval passed or a flush waits.
    private func isDue(_ state: State) -> Bool {
        state.hasBatch && (state.queue.count >= batchSize || state.due || !state.flushWaiters.isEmpty)
    }

    /// Posts one batch, with the OTLP specification's retries; whether the collector took it.
    private func deliver(_ batch: [TraceSpan], triesOnce: Bool) async -> Bool {
        await delivery.deliver(OTLPJSON.body(batch, serviceName: serviceName), once: triesOnce)
    }

    /// Counts a batch delivered or dropped, and releases the flushes it completes.
    private func settle(_ count: Int, delivered: Bool) {
        let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            // A stop counted the batch already.
            guard !state.stopped else { return [] }
            state.inFlight = 0
            state.settled += count
            if delivered { state.delivered += count } else { state.dropped += count }
            let settled = state.settled
            let done = state.flushWaiters.filter { $0.target <= settled }.map(\.resume)
            state.flushWaiters.removeAll { $0.target <= settled }
            return done
        }
        for waiter in released { waiter.resume() }
    }
}
