import Foundation

/// One run of a task in progress, from `download()` (or `send()`, `stream()`, a file download)
/// until it returns: its `RunStateMachine`, whose states own what the run waits on, and the
/// launching and cancelling of that work.
///
/// The run executes in its caller's task. What it waits on runs in tasks of its own (the
/// attempt's exchange, the retry wait), so cancelling by tag or type and the deadline cancel
/// those and never the caller's task, and a transport sees every cancellation as the cancellation
/// of the Swift task it runs in.
@ConveyActor
final class ActiveRun: DeadlineWatcher {
    /// The task's `sessionTag`.
    let tag: String?
    /// The type of the task being run.
    let taskType: any DownloadingTask.Type
    /// When the run started.
    let startedAt = Date()
    /// The clock deadlines and retry decisions are measured on.
    let clock: any RunClock
    private var machine: RunStateMachine

    init(tag: String?, taskType: any DownloadingTask.Type, totalTimeout: Duration?, clock: any RunClock) {
        self.tag = tag
        self.taskType = taskType
        self.clock = clock
        machine = RunStateMachine(totalTimeout: totalTimeout, startingAt: clock.now)
    }

    /// The attempt in progress, from 1.
    var attemptNumber: Int { machine.attemptNumber }

    /// The run's deadline, when it has a total timeout.
    var deadline: RunDeadline? {
        machine.deadline.map { RunDeadline(instant: $0, limit: machine.totalTimeout ?? .zero, clock: clock) }
    }

    /// Makes the run cancellable by tag and type and has the alarm wake it at its deadline, until `end()`.
    func begin() {
        ActiveRuns.insert(self)
        if let deadline = machine.deadline { clock.deadlineAlarm.watch(self, until: deadline, on: clock) }
    }

    func end() {
        ActiveRuns.remove(self)
        if machine.deadline != nil { clock.deadlineAlarm.forget(self) }
    }

    /// Stops the run as cancelled; `false` when it was already over.
    @discardableResult
    func cancel() -> Bool {
        if machine.isFinished { return false }
        carryOut(machine.cancel())
        return true
    }

    /// Stops the run as timed out, if its deadline has passed at `now`.
    func deadlinePassed(at now: ContinuousClock.Instant) {
        carryOut(machine.deadlinePassed(at: now))
    }

    /// Takes one step of the run's machine, at the clock's current instant, and returns what the
    /// machine says to do. A cancellation of the caller's task reaches the machine first, so the
    /// step sees it even before the cancellation handler's hop to the actor has run.
    func step<Action>(_ transition: (inout RunStateMachine, ContinuousClock.Instant) -> Action) -> Action {
        if Task.isCancelled { carryOut(machine.cancel()) }
        return transition(&machine, clock.now)
    }

    /// Starts the attempt's exchange to `url` in a task of its own on the actor, which the
    /// machine's exchanging state owns and a stop cancels, and returns its result. A stopped run
    /// starts no exchange and throws the stop's error.
    func exchange<Result: Sendable>(to url: URL?, _ work: @escaping @Sendable @ConveyActor () async throws -> Result) async throws -> Result {
        var running: Task<Result, any Error>?
        try step { machine, _ in
            machine.exchangeStarting(url: url) {
                let launched = Task(operation: work)
                running = launched
                return launched
            }
        }.proceedOrThrow()
        // The machine launched the exchange when it said to proceed.
        guard let running else { throw CancellationError() }
        return try await running.value
    }

    /// Waits `duration` with `waiter` in a task of its own, which the machine's waiting state
    /// owns and a stop cancels. A stopped run starts no wait.
    func waitToRetry(_ duration: Duration, using waiter: any RetryWaiting) async {
        var waiting: Task<Void, any Error>?
        _ = step { machine, _ in
            machine.retryWaitStarting {
                let launched = Task { try await waiter.wait(duration) }
                waiting = launched
                return launched
            }
        }
        _ = await waiting?.result
    }

    private func carryOut(_ action: RunStateMachine.StopAction) {
        switch action {
        case .none: break
        case .cancel(let work): work.cancel()
        }
    }
}

/// Work a run waits on and a stop cancels: a `Task` of any result.
protocol CancellableWork {
    func cancel()
}

extension Task: CancellableWork {}
