import Foundation

/// One run of a task, from `download()` or `send()` until it returns: what can be cancelled by tag
/// or by type, and what a total timeout ends. The run executes in its caller's task; cancelling it
/// stops what it is waiting on (the exchange, a retry wait) and leaves the caller's task alone.
///
/// ```swift
/// struct SearchTask: ServerTask {
///     let query: String
///     var path: String { "search" }
///     var sessionTag: String? { "search" }
/// }
/// ConveySession.cancel(sessionWithTag: "search")   // a new query replaces the old ones
/// ```
///
/// Cancelled runs end with `ConveyError.cancelled` (their `didFail` hook sees it); runs past their
/// total timeout end with `ConveyError.timedOut` of kind `.total`. Other runs are untouched.
@ConveyActor
public final class ConveySession {
    /// The task's `sessionTag`.
    public let tag: String?
    /// The type of the task being run.
    public let taskType: any DownloadingTask.Type
    /// When the run started.
    public let startedAt: Date
    /// When the run's total timeout ends it, if it has one.
    let deadline: ContinuousClock.Instant?
    /// The total timeout behind `deadline`.
    let totalTimeout: Duration?
    /// Whether the total timeout ended the run.
    private(set) var deadlineExpired = false
    /// Stops whatever the run is waiting on: its exchange or its retry wait.
    let cancellation = TransportCancellation()

    private static var active: [ObjectIdentifier: ConveySession] = [:]

    init(tag: String?, taskType: any DownloadingTask.Type, totalTimeout: Duration?) {
        self.tag = tag
        self.taskType = taskType
        self.startedAt = Date()
        self.totalTimeout = totalTimeout
        self.deadline = totalTimeout.map { ContinuousClock.now + $0 }
    }

    /// The runs in progress.
    public static var activeSessions: [ConveySession] { Array(active.values) }

    /// Cancels every run whose task's `sessionTag` is `tag`; returns how many were cancelled.
    @discardableResult
    public static func cancel(sessionWithTag tag: String) -> Int {
        cancel { $0.tag == tag }
    }

    /// Cancels every run of a task type; returns how many were cancelled.
    @discardableResult
    public static func cancel<T: DownloadingTask>(tasksOfType type: T.Type) -> Int {
        cancel { $0.taskType == type }
    }

    /// Cancels every run in progress; returns how many were cancelled.
    @discardableResult
    public static func cancelAll() -> Int {
        cancel { _ in true }
    }

    private static func cancel(where matches: (ConveySession) -> Bool) -> Int {
        let chosen = active.values.filter(matches)
        chosen.forEach { $0.cancellation.cancel() }
        return chosen.count
    }

    /// Registers the run, which `cancel` stops, until `end()`.
    func begin() {
        Self.active[ObjectIdentifier(self)] = self
        if deadline != nil { DeadlineScheduler.shared.watch(self) }
    }

    func end() {
        Self.active[ObjectIdentifier(self)] = nil
        if deadline != nil { DeadlineScheduler.shared.forget(self) }
    }

    /// Ends the run because its total timeout passed.
    func expire() {
        deadlineExpired = true
        cancellation.cancel()
    }

    /// Whether the run was cancelled from outside, or ran out of time.
    var isCancelled: Bool { cancellation.isCancelled }

    /// Throws `ConveyError.cancelled` when the run was cancelled, by its caller or from outside.
    func checkCancellation() throws {
        if isCancelled || Task.isCancelled { throw ConveyError.cancelled }
    }

    /// Waits before a retry with `waiter`; cancelling the run, or its caller, ends the wait at once.
    func sleep(for seconds: TimeInterval, using waiter: any RetryWaiting) async throws {
        let timer = Task { try await waiter.wait(.seconds(seconds)) }
        cancellation.register { timer.cancel() }
        defer { cancellation.unregister() }
        try await withTaskCancellationHandler {
            try await timer.value
        } onCancel: {
            timer.cancel()
        }
        try checkCancellation()
    }

    /// Whether waiting `seconds` more still ends before the deadline.
    func hasTime(forWaiting seconds: TimeInterval) -> Bool {
        guard let deadline else { return true }
        return ContinuousClock.now + .seconds(seconds) < deadline
    }

    /// The error a run reports: cancellation caused by the total timeout is a timeout.
    func explain(_ error: any Error, url: URL?) -> any Error {
        guard deadlineExpired, error.isCancellation, let totalTimeout else { return error }
        return ConveyError.timedOut(TimeoutFailure(kind: .total, limit: totalTimeout, url: url))
    }
}
