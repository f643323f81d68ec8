import Foundation

/// One run of a task in progress, from `download()` (or `send()`, `stream()`, a file download)
/// until it returns: what its steps share (its plan, its chain and observers, how it was started,
/// the values features keep for it under keys of their own, `RunValueKey`, as OkHttp's request
/// tags), its `RunStateMachine`, whose states own what the run waits on, and the carrying out of
/// stops that come from outside the run's own task. One object, so that a run costs one allocation
/// for all of it.
///
/// The run executes in its caller's task, off `@ConveyActor`. A stop (cancellation by tag or
/// type, the caller's task cancelled, the deadline) reaches the machine under the run's lock, from
/// any thread, and cancels what its state owns: the exchange (through the cancellation the
/// transport registered, `ExchangeCancellation`, or the task a transport that registers none runs
/// in) or the retry wait. The caller's task itself is never cancelled by a stop.
final class ActiveRun: DeadlineWatcher, Sendable {
    /// The run's settings, read once.
    let plan: RunPlan
    /// The run's steps, and who hears of it.
    let chain: Chain
    let observers: RunObservers
    /// How the run was started: where it goes, whether the server hears of it, its first values.
    let start: RunStart
    /// The values features keep for the run.
    private let values: InlineLocked<[ObjectIdentifier: any Sendable]>
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
    /// The machine, and what the run keeps beside it, behind one lock.
    private let state: InlineLocked<Guarded>

    private struct Guarded: Sendable {
        var machine: RunStateMachine
        var shared = Shared()
    }

    private struct Shared: Sendable {
        /// The last exchange that completed, in any attempt: what the server's hook is shown.
        var lastExchange: Exchange?
        /// A stop that came once the machine had finished, while steps around the run still ran.
        var lateStop: RunStateMachine.Stop?
    }

    init(plan: RunPlan, taskType: any DownloadingTask.Type, chain: Chain, observers: RunObservers, start: RunStart) {
        self.plan = plan
        self.chain = chain
        self.observers = observers
        self.start = start
        values = InlineLocked(start.values.stored)
        tag = plan.tag
        self.taskType = taskType
        let clock = plan.clock
        let totalTimeout = plan.totalTimeout
        self.clock = clock
        let machine = RunStateMachine(totalTimeout: totalTimeout, startingAt: clock.now)
        state = InlineLocked(Guarded(machine: machine))
        deadlineInstant = machine.deadline
        self.totalTimeout = totalTimeout
    }

    /// The value kept under `key`, if any.
    subscript<Key: RunValueKey>(key: Key.Type) -> Key.Value? {
        get { values.withLock { $0[ObjectIdentifier(key)] } as? Key.Value }
        set { values.withLock { $0[ObjectIdentifier(key)] = newValue } }
    }

    /// The attempt in progress, from 1.
    var attemptNumber: Int { state.withLock { $0.machine.attemptNumber } }

    /// The run's deadline, when it has a total timeout.
    var deadline: RunDeadline? {
        deadlineInstant.map { RunDeadline(instant: $0, limit: totalTimeout ?? .zero, clock: clock) }
    }

    /// The run's identity while it lasts: never 0, different for every run in progress.
    var identity: UInt64 { UInt64(UInt(bitPattern: ObjectIdentifier(self).hashValue)) }

    /// The last exchange that completed, in any attempt.
    var lastExchange: Exchange? { state.withLock { $0.shared.lastExchange } }

    /// Keeps `exchange` as the run's last completed exchange.
    func completed(_ exchange: Exchange) {
        state.withLock { $0.shared.lastExchange = exchange }
    }

    /// Lets go of what the machine still holds once the run's outcome is known outside its
    /// attempts (a step around the run answered or threw).
    func abandon() {
        state.withLock { $0.machine.abandon() }?.release()
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
        let (wasRunning, action) = state.withLock { state in
            Self.noteLateStop(.cancelled, in: &state)
            return (!state.machine.isFinished, state.machine.cancel())
        }
        carryOut(action)
        return wasRunning
    }

    /// Stops the run as timed out, if its deadline has passed at `now`.
    func deadlinePassed(at now: ContinuousClock.Instant) {
        let action = state.withLock { state in
            if let deadline = state.machine.deadline, now >= deadline { Self.noteLateStop(.deadlinePassed, in: &state) }
            return state.machine.deadlinePassed(at: now)
        }
        carryOut(action)
    }

    /// Notes a stop the finished machine will not take, for a step around the run that would send
    /// the request again; holding the lock.
    private static func noteLateStop(_ reason: RunStateMachine.Stop, in state: inout Guarded) {
        if state.machine.isFinished, state.machine.stop == nil, state.shared.lateStop == nil { state.shared.lateStop = reason }
    }

    /// The error of a stop that came after the run's attempts ended, while a step around the run
    /// still went on: the run ends with it, whatever the step returns.
    var lateStopError: ConveyError? {
        state.withLock { state in
            switch state.shared.lateStop {
            case .cancelled: .cancelled
            case .deadlinePassed: .totalTimedOut(limit: totalTimeout ?? .zero, url: state.shared.lastExchange?.request.url)
            case nil: nil
            }
        }
    }

    /// A step around the run sends its request again: a new attempt, unless the run was stopped.
    func sendingAgain() -> RunStateMachine.RunAction {
        state.withLock { $0.machine.sendingAgain(stopped: $0.shared.lateStop) }
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
        let (stopAction, action) = state.withLock { state in
            let stopAction = cancelled ? state.machine.cancel() : .none
            return (stopAction, transition(&state.machine))
        }
        carryOut(stopAction)
        return action
    }

    /// Registers what cancels the exchange in flight; `false` when the run was stopped already.
    func exchangeCancellable(by work: any CancellableWork) -> Bool {
        state.withLock { $0.machine.exchangeCancellable(by: work) }
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
        switch started {
        case .proceed: _ = await waiting?.result
        case .fail: return started
        case .startAttempt, .refreshCredentials, .waitToRetry, .succeed: break
        }
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
