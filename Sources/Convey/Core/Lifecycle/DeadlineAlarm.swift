import Foundation

/// Wakes runs (and streams past their runs) whose total timeout has passed, with one sleeping task
/// for everything on a clock, so a deadline costs a dictionary insert, not a timer per run: a
/// cancelled `Task.sleep` keeps its timer until it would have fired, and runs mostly end long
/// before their deadline.
///
/// The alarm only says that a deadline passed; the watcher (a run's `RunStateMachine`) decides
/// what that means. The timer is only moved earlier, never cancelled when the last run ends: the
/// next run's deadline is usually later, so the armed timer serves it. Safe from any thread.
final class DeadlineAlarm: @unchecked Sendable {
    private let lock = NSLock()
    private var watchers: [ObjectIdentifier: (watcher: any DeadlineWatcher, deadline: ContinuousClock.Instant)] = [:]
    private var timer: Task<Void, Never>?
    private var wakeAt: ContinuousClock.Instant?

    init() {}

    /// Wakes `watcher` once `clock` passes `deadline`, unless `forget` comes first.
    func watch(_ watcher: any DeadlineWatcher, until deadline: ContinuousClock.Instant, on clock: any RunClock) {
        lock.withLock {
            watchers[ObjectIdentifier(watcher)] = (watcher, deadline)
            if let wakeAt, wakeAt <= deadline { return }
            schedule(at: deadline, on: clock)
        }
    }

    func forget(_ watcher: any DeadlineWatcher) {
        lock.withLock { watchers[ObjectIdentifier(watcher)] = nil }
    }

    /// Behind `lock`.
    private func schedule(at instant: ContinuousClock.Instant, on clock: any RunClock) {
        timer?.cancel()
        wakeAt = instant
        timer = Task { [weak self] in
            guard (try? await clock.sleep(until: instant)) != nil else { return }
            self?.ring(on: clock)
        }
    }

    private func ring(on clock: any RunClock) {
        let now = clock.now
        let due: [any DeadlineWatcher] = lock.withLock {
            timer = nil
            wakeAt = nil
            var due: [any DeadlineWatcher] = []
            for (key, entry) in watchers where entry.deadline <= now {
                watchers[key] = nil
                due.append(entry.watcher)
            }
            if let next = watchers.values.map(\.deadline).min() { schedule(at: next, on: clock) }
            return due
        }
        for watcher in due { watcher.deadlinePassed(at: now) }
    }
}
