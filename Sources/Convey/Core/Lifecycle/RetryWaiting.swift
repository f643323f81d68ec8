/// How a run waits between attempts: time is an input, so tests can substitute a waiter that
/// records the waits a rule asked for instead of sleeping through them.
protocol RetryWaiting: Sendable {
    /// Waits `duration`; throws `CancellationError` when the calling task is cancelled.
    func wait(_ duration: Duration) async throws
}

/// The real waiter: `Task.sleep` on the continuous clock.
struct SleepingRetryWaiter: RetryWaiting {
    func wait(_ duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
