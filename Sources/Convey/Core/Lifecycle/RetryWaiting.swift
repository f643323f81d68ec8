/// How a run waits between attempts: time is an input, so tests can substitute a waiter that
/// records the waits a rule asked for instead of sleeping through them. Class-bound, so that
/// `ServerConfiguration` stays loadable (see `RunClock`).
protocol RetryWaiting: AnyObject, Sendable {
    /// Waits `duration`; throws `CancellationError` when the calling task is cancelled.
    func wait(_ duration: Duration) async throws
}

/// The real waiter: `Task.sleep` on the continuous clock.
final class SleepingRetryWaiter: RetryWaiting {
    /// The one real waiter.
    static let shared = SleepingRetryWaiter()

    private init() {}

    func wait(_ duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
