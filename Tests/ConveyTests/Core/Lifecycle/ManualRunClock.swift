import Foundation
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A run clock that moves only when a test says so: sleepers wake when `advance(by:)` passes
/// their instant, so deadline tests never wait on real time.
final class ManualRunClock: RunClock, @unchecked Sendable {
    private struct Sleeper {
        let until: ContinuousClock.Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = NSLock()
    private var current = ContinuousClock.now
    private var sleepers: [Int: Sleeper] = [:]
    private var nextSleeper = 0
    let deadlineAlarm = DeadlineAlarm()

    var now: ContinuousClock.Instant { lock.withLock { current } }

    /// Moves the clock on and wakes every sleeper whose instant it reached.
    func advance(by duration: Duration) {
        let woken = lock.withLock { () -> [Sleeper] in
            current += duration
            let due = sleepers.filter { $0.value.until <= current }
            for key in due.keys { sleepers[key] = nil }
            return Array(due.values)
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    func sleep(until instant: ContinuousClock.Instant) async throws {
        let id = lock.withLock { () -> Int in
            nextSleeper += 1
            return nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = lock.withLock {
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if instant <= current { return .success(()) }
                    sleepers[id] = Sleeper(until: instant, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = lock.withLock { sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
