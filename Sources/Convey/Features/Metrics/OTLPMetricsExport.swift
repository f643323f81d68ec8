import Foundation

/// The metrics side of `OTLPExporter`: its aggregator, and a task of its own that collects it
/// every interval (and at each flush) and posts the collection to the collector's `/v1/metrics`,
/// with the retries spans get. One collection is in flight at a time, and the aggregator's series
/// are bounded, so memory stays flat however long the collector is down; a collection that could
/// not be delivered is dropped and counted (with cumulative temporality, the next one carries its
/// totals all the same).
final class OTLPMetricsExport: Sendable {
    let aggregator: MetricAggregator
    let delivery: OTLPDelivery
    private let serviceName: String
    private let interval: Duration
    private let state = Locked(State())
    private let tasks = Locked<[Task<Void, Never>]>([])

    private struct State: Sendable {
        var started = false
        var stopped = false
        /// The interval passed, or a flush asks for an export.
        var due = false
        /// Set by a shutdown: exports get one try.
        var triesOnce = false
        /// Exports begun and finished; a flush waits for the export after those begun when it was called.
        var begun = 0
        var finished = 0
        var flushWaiters: [(id: Int, target: Int, resume: CheckedContinuation<Void, Never>)] = []
        var flushes = 0
        /// The worker, waiting for something to do.
        var idleWorker: CheckedContinuation<Void, Never>?
        var counts = Counts()
    }

    /// What the export has done, in data points (one per series of an instrument in a collection).
    struct Counts: Sendable, Hashable {
        var deliveredPoints = 0
        var droppedPoints = 0
        var exports = 0
    }

    init(aggregator: MetricAggregator, delivery: OTLPDelivery, serviceName: String, interval: Duration) {
        self.aggregator = aggregator
        self.delivery = delivery
        self.serviceName = serviceName
        self.interval = interval
    }

    var counts: Counts { state.value.counts }

    /// Called after each measurement with whether it was the first: the first starts the export's task.
    @inline(__always)
    func measured(_ first: Bool) {
        if first { startWorking() }
    }

    /// Returns once what was measured before the call is delivered or dropped, or once the calling
    /// task is cancelled; with `tryingOnce` (a shutdown), the export gets one try.
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
                    guard state.started, !state.stopped, !Task.isCancelled else { return (true, nil) }
                    state.flushWaiters.append((id, state.begun + 1, resume))
                    state.due = true
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

    /// Stops the worker and the timer, stops the aggregator taking measurements, and releases every flush.
    func stop() {
        aggregator.stop()
        let (waiters, idle) = state.withLock { state -> ([CheckedContinuation<Void, Never>], CheckedContinuation<Void, Never>?) in
            state.stopped = true
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

    /// Starts the worker and the timer, detached so that they carry none of the task-local values
    /// of the run that made the first measurement.
    private func startWorking() {
        let start = state.withLock { state in
            defer { state.started = true }
            return !state.started && !state.stopped
        }
        guard start else { return }
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

    /// The interval passed: an export is due.
    private func tick() {
        let idle = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.due = true
            defer { state.idleWorker = nil }
            return state.idleWorker
        }
        idle?.resume()
    }

    private func work() async {
        while let triesOnce = await nextExport() {
            var delivered = false
            var points = 0
            if let snapshot = aggregator.collect() {
                points = snapshot.pointCount
                delivered = await delivery.deliver(OTLPMetricsJSON.body(snapshot, serviceName: serviceName), once: triesOnce)
            }
            finish(points: points, delivered: delivered)
        }
    }

    /// Waits until an export is due and begins it (whether it gets one try only); `nil` once stopped.
    private func nextExport() async -> Bool? {
        while true {
            let next = state.withLock { state -> Bool?? in
                if state.stopped { return .some(nil) }
                guard state.due else { return .none }
                state.due = false
                state.begun += 1
                return .some(state.triesOnce)
            }
            if let next { return next }
            await withCheckedContinuation { (resume: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if state.stopped || state.due { return true }
                    state.idleWorker = resume
                    return false
                }
                if ready { resume.resume() }
            }
        }
    }

    /// Counts an export, and releases the flushes it completes.
    private func finish(points: Int, delivered: Bool) {
        let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.finished += 1
            if points > 0 {
                state.counts.exports += 1
                if delivered { state.counts.deliveredPoints += points } else { state.counts.droppedPoints += points }
            }
            let finished = state.finished
            let done = state.flushWaiters.filter { $0.target <= finished }.map(\.resume)
            state.flushWaiters.removeAll { $0.target <= finished }
            return done
        }
        for waiter in released { waiter.resume() }
    }
}
