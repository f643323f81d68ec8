/// Time as runs see it: what the total timeout is measured against and what wakes a run at its
/// deadline. An input, so deadline rules are tested on a clock a test moves by hand. Class-bound,
/// like `RetryWaiting`: an existential of any other protocol would make `ServerConfiguration`
/// address-only, and every read of one setting would copy the whole configuration.
protocol RunClock: AnyObject, Sendable {
    /// The current instant.
    var now: ContinuousClock.Instant { get }
    /// Returns at `instant`; throws `CancellationError` when the calling task is cancelled first.
    func sleep(until instant: ContinuousClock.Instant) async throws
    /// The alarm that wakes the runs on this clock at their deadlines.
    var deadlineAlarm: DeadlineAlarm { get }
}

/// The real clock: the continuous clock, which keeps counting while the machine sleeps.
final class ContinuousRunClock: RunClock {
    /// The one real clock.
    static let shared = ContinuousRunClock()
    /// One alarm for every run on the real clock.
    private static let alarm = DeadlineAlarm()

    private init() {}

    var now: ContinuousClock.Instant { .now }

    func sleep(until instant: ContinuousClock.Instant) async throws {
        try await Task.sleep(until: instant, clock: .continuous)
    }

    var deadlineAlarm: DeadlineAlarm { Self.alarm }
}
