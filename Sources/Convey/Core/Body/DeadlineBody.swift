import Foundation

/// A streamed body that keeps its run's deadline past the run: a stream that asked for a total
/// timeout (`stream(totalTimeout:)`) ends with `ConveyError.totalTimedOut` when it passes,
/// whatever wraps the body beneath. Watched through the clock's alarm until the body ends.
final class DeadlineBody: BodySource, DeadlineWatcher {
    private let inner: any BodySource
    private let deadline: RunDeadline
    private let state = InlineLocked(State())

    private struct State: Sendable {
        /// Whether the deadline passed before the body ended; the reader's next read throws.
        var passed = false
        var ended = false
    }

    init(_ inner: any BodySource, deadline: RunDeadline) {
        self.inner = inner
        self.deadline = deadline
        deadline.clock.deadlineAlarm.watch(self, until: deadline.instant, on: deadline.clock)
    }

    deinit {
        deadline.clock.deadlineAlarm.forget(self)
    }

    var url: URL? { inner.url }
    var metrics: ExchangeMetrics? { inner.metrics }

    func next() async throws -> Data? {
        if state.value.passed { throw timedOut }
        let chunk: Data?
        do {
            chunk = try await inner.next()
        } catch {
            if state.value.passed { throw timedOut }
            ended()
            throw error
        }
        if state.value.passed { throw timedOut }
        if chunk == nil { ended() }
        return chunk
    }

    func close() {
        ended()
        inner.close()
    }

    func cancel() {
        ended()
        inner.cancel()
    }

    func deadlinePassed(at now: ContinuousClock.Instant) {
        guard now >= deadline.instant else { return }
        let stops = state.withLock { state in
            guard !state.ended else { return false }
            state.passed = true
            return true
        }
        if stops { inner.close() }
    }

    private var timedOut: ConveyError {
        .totalTimedOut(limit: deadline.limit, url: inner.url)
    }

    private func ended() {
        let forgets = state.withLock { state in
            defer { state.ended = true }
            return !state.ended
        }
        if forgets { deadline.clock.deadlineAlarm.forget(self) }
    }
}
