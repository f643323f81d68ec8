import Foundation

/// One run of a task in progress, from `download()` (or `send()`, `stream()`, a file download)
/// until it returns: its `RunStateMachine`, whose states own what the run waits on, and the
/// carrying out of stops that come from outside the run's own task.
///
/// The run executes in its caller's task, off `@ConveyActor`. A stop (cancellation by tag or
/// type, the caller's task cancelled, the deadline) reaches the machine under the run's lock, from
/// any thread, and cancels what its state owns: the exchange (through the cancellation the
/// transport registered, `ExchangeCancellation`, or the task a transport that registers none runs
/// in) or the retry wait. The caller's task itself is never cancelled by a stop.
final class ActiveRun: DeadlineWatcher, @unchecked Sendable {
    /// The task's `sessionTag`.
    let tag: String?
    /// The type of the task being run.
    let taskType: any DownloadingTask.Type
    /// When the run started.
    let startedAt = Date()
    /// The clock deadlines and retry decisions are measured on.
    let clock: any RunClock
    /// When the total timeout ends the run, if it has one.
    private let deadlineInstant: ContinuousClock.Instant?
    private let totalTimeout: Duration?
    private let lock = InlineLock()
    /// Behind `lock`.
    private var machine: RunStateMachine

    init(tag: String?, taskType: any DownloadingTask.Type, totalTimeout: Duration?, clock: any RunClock) {
        self.tag = tag
        self.taskType = taskType
        self.clock = clock
        machine = RunStateMachine(totalTimeout: totalTimeout, startingAt: clock.now)
        deadlineInstant = machine.deadline
        self.totalTimeout = totalTimeout
    }

    /// The attempt in progress, from 1.
    var attemptNumber: Int { lock.withLock { machine.attemptNumber } }

    /// The run's deadline, when it has a total timeout.
    var deadline: RunDeadline? {
        deadlineInstant.map { RunDeadline(instant: $0, limit: totalTimeout ?? .zero, clock: clock) }
    }

    /// Makes the run cancellable by tag and type and has the alarm wake it at its deadline, until `end()`.
    func begin() {
        ActiveRuns.insert(self)
        if let deadline = deadlineInstant { clock.deadlineAlarm.watch(self, until: deadline, on: clock) }
    }

    func end() {
        ActiveRuns.remove(self)
        if deadlineInstant != nil { clock.deadlineAlarm.forget(self) }
    }

    /// Stops the run as cancelled; `false` when it was already over.
    @discardableResult
    func cancel() -> Bool {
        let (wasRunning, action) = lock.withLock { (!machine.isFinished, machine.cancel()) }
        carryOut(action)
        return wasRunning
    }

    /// Stops the run as timed out, if its deadline has passed at `now`.
    func deadlinePassed(at now: ContinuousClock.Instant) {
        carryOut(lock.withLock { machine.deadlinePassed(at: now) })
    }

    /// Takes one step of the run's machine, at the clock's current instant, and returns what the
    /// machine says to do. A cancellation of the caller's task reaches the machine first, so the
    /// step sees it even before the cancellation handler has run.
    func step<Action>(_ transition: (inout RunStateMachine, ContinuousClock.Instant) -> Action) -> Action {
        let now = clock.now
        return step { transition(&$0, now) }
    }

    /// Takes one step of the run's machine that needs no clock.
    func step<Action>(_ transition: (inout RunStateMachine) -> Action) -> Action {
        let cancelled = Task.isCancelled
        let (stopAction, action) = lock.withLock {
            let stopAction = cancelled ? machine.cancel() : .none
            return (stopAction, transition(&machine))
        }
        carryOut(stopAction)
        return action
    }

    /// Registers what cancels the exchange in flight; `false` when the run was stopped already.
    func exchangeCancellable(by work: any CancellableWork) -> Bool {
        lock.withLock { machine.exchangeCancellable(by: work) }
    }

    /// Waits `duration` with `waiter` in a task of its own, which the machine's waiting state
    /// owns and a stop cancels. A stopped run starts no wait.
    func waitToRetry(_ duration: Duration, using waiter: any RetryWaiting) async -> RunStateMachine.RunAction {
        var waiting: Task<Void, any Error>?
        let started = step { machine in
            machine.retryWaitStarting {
                let launched = Task { try await waiter.wait(duration) }
                waiting = launched
                return launched
            }
        }
        if case .proceed = started { _ = await waiting?.result }
        return step { $0.retryWaitEnded(at: $1) }
    }

    private func carryOut(_ action: RunStateMachine.StopAction) {
        switch action {
        case .none: break
        case .cancel(let work): work.cancel()
        }
    }
}

/// The runs in progress: what `ConveySession.cancel(sessionWithTag:)`, `cancel(tasksOfType:)`,
/// `cancelAll()` and `activeSessions` reach, from any thread.
enum ActiveRuns {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var runs: [ObjectIdentifier: ActiveRun] = [:]

    /// Every run in progress.
    static var all: [ActiveRun] { lock.withLock { Array(runs.values) } }

    static func insert(_ run: ActiveRun) {
        lock.withLock { runs[ObjectIdentifier(run)] = run }
    }

    static func remove(_ run: ActiveRun) {
        lock.withLock { runs[ObjectIdentifier(run)] = nil }
    }

    /// Cancels the runs that match; returns how many were still going.
    static func cancel(where matches: (ActiveRun) -> Bool) -> Int {
        all.filter(matches).reduce(0) { count, run in run.cancel() ? count + 1 : count }
    }
}
