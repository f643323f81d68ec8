/// A run's one deadline as a value: when the total timeout ends the run, the limit it came from
/// (for the error that names it), and the clock that says when it has passed. A stream that asked
/// for a total timeout carries its run's deadline past the run, over its body.
struct RunDeadline: Sendable {
    /// When the deadline passes, on `clock`.
    let instant: ContinuousClock.Instant
    /// The total timeout the deadline was set from.
    let limit: Duration
    /// The clock the deadline is measured on, whose alarm wakes what watches it.
    let clock: any RunClock
}

/// Something that stops when a deadline passes: a run, or a stream past its run. The deadline
/// alarm calls it, from any thread; it checks `now` against its own deadline and decides what that means.
protocol DeadlineWatcher: AnyObject, Sendable {
    /// The alarm rang for this watcher's deadline at `now`.
    func deadlinePassed(at now: ContinuousClock.Instant)
}
