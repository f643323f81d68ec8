import Foundation

/// Wakes runs (and streams past their runs) whose total timeout has passed, with one sleeping task
/// for everything on a clock, so a deadline costs a dictionary insert, not a timer per run: a
/// cancelled `Task.sleep` keeps its timer until it would have fired, and runs mostly end long
/// before their deadline.
///
/// The alarm only says that a deadline passed; the watcher (a run's `RunStateMachine`) decides
/// what that means. The timer is only moved earlier, never cancelled when the last run ends: the
/// next run's deadline is usually later, so the armed timer serves it. Safe from any thread.
final class DeadlineAlarm: Sendable {
    private let state = InlineLocked(Watch())

    /// Who waits for which deadline, and the timer armed for the earliest.
    private struct Watch: Sendable {
        var watchers: [ObjectIdentifier: (watcher: any DeadlineWatcher, deadline: ContinuousClock.Instant)] = [:]
        var timer: Task<Void, Never>?
        var wakeAt: ContinuousClock.Instant?
    }

    init() {}

    /// Wakes `watcher` once `clock` passes `deadline`, unless `forget` comes first.
    func watch(_ watcher: any DeadlineWatcher, until deadline: ContinuousClock.Instant, on clock: any RunClock) {
        state.withLock { state in
            state.watchers[ObjectIdentifier(watcher)] = (watcher, deadline)
            if let wakeAt = state.wakeAt, wakeAt <= deadline { return }
            schedule(at: deadline, on: clock, in: &state)
        }
    }

    func forget(_ watcher: any DeadlineWatcher) {
        state.withLock { $0.watchers[ObjectIdentifier(watcher)] = nil }
    }

    /// Arms the timer for `instant`, holding the lock.
    private func schedule(at instant: ContinuousClock.Instant, on clock: any RunClock, in state: inout Watch) {
        state.timer?.cancel()
        state.wakeAt = instant
        state.timer = Task { [weak self] in
            guard (try? await clock.sleep(until: instant)) != nil else { return }
            self?.ring(on: clock)
        }
    }

    private func ring(on clock: any RunClock) {
        let now = clock.now
        let due: [any DeadlineWatcher] = state.withLock { state in
            state.timer = nil
            state.wakeAt = nil
            var due: [any DeadlineWatcher] = []
            for (key, entry) in state.watchers where entry.deadline <= now {
                state.watchers[key] = nil
                due.append(entry.watcher)
            }
            if let next = state.watchers.values.map(\.deadline).min() { schedule(at: next, on: clock, in: &state) }
            return due
        }
        for watcher in due { watcher.deadlinePassed(at: now) }
    }
}
