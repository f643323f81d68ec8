/// Wakes runs (and streams past their runs) whose total timeout has passed, with one sleeping task
/// for everything on a clock,
/// so a deadline costs a dictionary insert, not a timer per run: a cancelled `Task.sleep` keeps
/// its timer until it would have fired, and runs mostly end long before their deadline.
///
/// The alarm only says that a deadline passed; the watcher (a run's `RunStateMachine`) decides
/// what that means. The timer is only moved earlier, never cancelled when the last run ends: the next run's
/// deadline is usually later, so the armed timer serves it.
@ConveyActor
final class DeadlineAlarm {
    private var watchers: [ObjectIdentifier: (watcher: any DeadlineWatcher, deadline: ContinuousClock.Instant)] = [:]
    private var timer: Task<Void, Never>?
    private var wakeAt: ContinuousClock.Instant?

    nonisolated init() {}

    /// Wakes `watcher` once `clock` passes `deadline`, unless `forget` comes first.
    func watch(_ watcher: any DeadlineWatcher, until deadline: ContinuousClock.Instant, on clock: any RunClock) {
        watchers[ObjectIdentifier(watcher)] = (watcher, deadline)
        if let wakeAt, wakeAt <= deadline { return }
        schedule(at: deadline, on: clock)
    }

    func forget(_ watcher: any DeadlineWatcher) {
        watchers[ObjectIdentifier(watcher)] = nil
    }

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
        timer = nil
        wakeAt = nil
        for (key, entry) in watchers where entry.deadline <= now {
            watchers[key] = nil
            entry.watcher.deadlinePassed(at: now)
        }
        if let next = watchers.values.map(\.deadline).min() { schedule(at: next, on: clock) }
    }
}
