import Foundation

/// The life of one run as a value: where the run is, what that state owns, whether something
/// stopped it from outside, and what each event means for it. `TaskRunner` feeds it every event
/// and carries out the action each transition returns; the machine itself never reads a clock,
/// so every rule about time is tested with instants a test picks.
///
/// A run builds an attempt, exchanges it with the server, checks and decodes the response, and
/// after a failure refreshes credentials (at most once, after a 401) or waits and tries again,
/// until it finishes. Each state carries what it holds: the attempt, the exchange in flight and
/// what cancels it, what the delivery holds for the attempt (a file claim, a stream's transfer),
/// the last exchange that completed. A stop (cancellation by tag, type or the caller's task; the
/// total deadline) is remembered, cancels what the current state owns, and decides the error the
/// run reports at its next step: a run stopped by its deadline reports `ConveyError.totalTimedOut`, any other stopped run `ConveyError.cancelled`, whatever its exchange brought back meanwhile.
///
/// Every transition switches over every state. An event the current state does not allow is a
/// defect in Convey: the state stays, the rejection is recorded in `rejections`, and the action
/// fails the run with `IllegalTransition`, which the runner asserts on in debug builds.
struct RunStateMachine {
    /// One attempt: its number and what the delivery holds for it until the run ends or lets it go.
    struct Attempt {
        /// The attempt's number, from 1.
        let number: Int
        /// What the delivery holds for the attempt (a file claim, a stream's transfer), once it holds something.
        var hold: (any AttemptHold)?
    }

    /// Where a run is, with what that state owns.
    enum State {
        /// No attempt in progress: before the first, or once a refresh or wait decided on the next.
        case idle
        /// Building an attempt's request: its body, `willSendRequest`, the field checks.
        case building(Attempt)
        /// Sending the request and receiving the response, with what cancels the exchange once
        /// the transport registered it (or the task it runs in).
        case exchanging(Attempt, cancel: (any CancellableWork)?)
        /// The response is in: hooks, the status check and the delivery's part (decoded, a file
        /// written, a stream checked), with what ends a body still being read.
        case receiving(Attempt, reading: (any CancellableWork)?)
        /// Waiting for the server's credential refresh after this 401; the refresh is shared with
        /// other runs, so a stop does not interrupt it.
        case refreshingCredentials(after: HTTPError)
        /// The next attempt waits until `until`; the wait has not started yet.
        case retryScheduled(until: ContinuousClock.Instant)
        /// Waiting until `until` before the next attempt: the wait, which a stop cancels.
        case waitingToRetry(until: ContinuousClock.Instant, wait: any CancellableWork)
        /// Over: the run delivered its payload or reported its failure.
        case finished
    }

    /// A state without what it owns, to compare, name and record.
    enum Phase: Equatable, Sendable {
        case idle, building, exchanging, receiving, refreshingCredentials
        case retryScheduled(until: ContinuousClock.Instant)
        case waitingToRetry(until: ContinuousClock.Instant)
        case finished
    }

    /// What stopped a run from outside its own steps.
    enum Stop: Equatable {
        /// Cancelled by tag, by type, all at once, or with the caller's task.
        case cancelled
        /// The total timeout passed.
        case deadlinePassed
    }

    /// Where the run is.
    private(set) var state: State = .idle
    /// What stopped the run, once something did; the first stop stands.
    private(set) var stop: Stop?
    /// The attempt in progress, from 1.
    private(set) var attemptNumber = 1
    /// The events the machine rejected, with the phase it was in; empty in a correct run.
    private(set) var rejections: [IllegalTransition] = []
    /// The defect that ended the run, once one did: a run ended by a defect never goes on.
    private(set) var defectEnding: (any Error)?
    /// The total timeout, when the run has one.
    let totalTimeout: Duration?
    /// When the total timeout ends the run (and a stream that asked for it, `RunDeadline`).
    let deadline: ContinuousClock.Instant?
    /// Whether the server's credential refresh already ran for this run: it runs at most once.
    private(set) var refreshedCredentials = false
    /// Where the current attempt's request goes, for the errors that name it.
    private var url: URL?

    /// A run starting at `now`, ended by its total timeout when it has one.
    init(totalTimeout: Duration?, startingAt now: ContinuousClock.Instant) {
        self.totalTimeout = totalTimeout
        deadline = totalTimeout.map { now + $0 }
    }

    /// The current state without what it owns.
    var phase: Phase {
        switch state {
        case .idle: .idle
        case .building: .building
        case .exchanging: .exchanging
        case .receiving: .receiving
        case .refreshingCredentials: .refreshingCredentials
        case .retryScheduled(let until): .retryScheduled(until: until)
        case .waitingToRetry(let until, _): .waitingToRetry(until: until)
        case .finished: .finished
        }
    }

    /// Whether the run is over.
    var isFinished: Bool { phase == .finished }

    /// How many attempts `retryInterval(afterError:count:)` is told were made: every attempt so
    /// far but the one retry after a credential refresh, which the refresh rule owns.
    var retryCount: Int { attemptNumber - (refreshedCredentials ? 1 : 0) }

    // MARK: - Stops

    /// Cancels the run: by tag or type, or because the caller's task was cancelled.
    mutating func cancel() -> StopAction {
        stopRun(.cancelled)
    }

    /// The alarm rang for the run's deadline; `now` confirms whether it has passed.
    mutating func deadlinePassed(at now: ContinuousClock.Instant) -> StopAction {
        guard let deadline, now >= deadline else { return .none }
        return stopRun(.deadlinePassed)
    }

    private mutating func stopRun(_ reason: Stop) -> StopAction {
        if isFinished { return .none }
        if stop == nil { stop = reason }
        switch state {
        case .exchanging(_, let cancel?): return .cancel(cancel)
        case .receiving(_, let reading?): return .cancel(reading)
        case .waitingToRetry(_, let wait): return .cancel(wait)
        // Building and receiving (with no body being read) run in the caller's task, the credential refresh is shared with
        // other runs, a scheduled wait has not started, and an exchange whose transport has not
        // registered yet finds the stop when it does: the stop ends the run at its next step.
        case .idle, .building, .exchanging, .receiving, .refreshingCredentials, .retryScheduled, .finished: return .none
        }
    }

    /// The error a stopped run reports: a total timeout when its deadline stopped it, else a cancellation.
    var stopError: any Error {
        switch stop {
        case .deadlinePassed:
            ConveyError.totalTimedOut(limit: totalTimeout ?? .zero, url: url)
        case .cancelled, nil:
            ConveyError.cancelled
        }
    }

    // MARK: - The steps of an attempt

    /// An attempt starts building its request at `now`; none starts once the deadline has passed.
    mutating func attemptStarting(at now: ContinuousClock.Instant) -> RunAction {
        switch state {
        case .idle:
            state = .building(Attempt(number: attemptNumber))
            _ = deadlinePassed(at: now)
            return stop == nil ? .proceed : .fail(stopError, release: nil)
        case .building, .exchanging, .receiving, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.attemptStarting), release: nil)
        }
    }

    /// The delivery holds `hold` for the attempt (a claimed partial file, a stream's transfer):
    /// the state keeps it until the run succeeds with it or lets it go. An attempt holds one
    /// thing at most: a second would be lost, so it is refused.
    mutating func holding(_ hold: any AttemptHold) -> RunAction {
        switch state {
        case .building(var attempt), .exchanging(var attempt, _), .receiving(var attempt, _):
            guard attempt.hold == nil else { return .fail(reject(.holding), release: nil) }
            attempt.hold = hold
            replaceAttempt(with: attempt)
            return .proceed
        case .idle, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.holding), release: nil)
        }
    }

    /// The attempt's request is built and goes out to `url` now. A stopped run sends nothing.
    mutating func exchangeStarting(url: URL?) -> RunAction {
        switch state {
        case .building(let attempt):
            self.url = url
            guard stop == nil else { return .fail(stopError, release: nil) }
            state = .exchanging(attempt, cancel: nil)
            return .proceed
        case .idle, .exchanging, .receiving, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.exchangeStarting), release: nil)
        }
    }

    /// What cancels the exchange in flight: the transport's own cancellation, or the task the
    /// exchange runs in. `false` when the run was stopped already, in which case the caller
    /// cancels it at once.
    mutating func exchangeCancellable(by work: any CancellableWork) -> Bool {
        switch state {
        case .exchanging(let attempt, _):
            guard stop == nil else { return false }
            state = .exchanging(attempt, cancel: work)
            return true
        case .idle, .building, .receiving, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            // A transport's late registration (the run already moved on) cancels nothing.
            return stop == nil
        }
    }

    /// The exchange brought back a response: its head, and its body in memory or as a stream
    /// still arriving, which `reading` ends when the run stops. A response that arrives after a
    /// stop does not undo it.
    mutating func responseReceived(reading: (any CancellableWork)? = nil) -> RunAction {
        switch state {
        case .exchanging(let attempt, _):
            guard stop == nil else {
                reading?.cancel()
                return .fail(stopError, release: nil)
            }
            state = .receiving(attempt, reading: reading)
            return .proceed
        case .idle, .building, .receiving, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.responseReceived), release: nil)
        }
    }

    /// The attempt's payload is ready: the run succeeds with what the attempt holds, unless it
    /// was stopped meanwhile (then what it holds is let go).
    mutating func payloadReady() -> RunAction {
        switch state {
        case .receiving(let attempt, _):
            guard stop == nil else { return finish(failing: stopError, releasing: attempt) }
            state = .finished
            return .succeed(keeping: attempt.hold)
        case .idle, .building, .exchanging, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.payloadReady), release: nil)
        }
    }

    // MARK: - After a failed attempt

    /// The attempt failed with `error` at `now`, while building, exchanging or receiving; what
    /// it held is let go. Then: the server's credential refresh after a first 401, another
    /// attempt after the wait `retryInterval` asks for when the deadline leaves time for it, or
    /// the end of the run with the error it reports. A 401 after the refresh is final, whatever
    /// `retryInterval` says. `retryInterval` is the task's rule (the error, `retryCount`); it is
    /// not asked after a stop or a cancellation.
    mutating func attemptFailed(_ error: any Error, at now: ContinuousClock.Instant,
                                retryInterval: (any Error, Int) -> TimeInterval?) -> RunAction {
        switch state {
        case .building(let attempt), .exchanging(let attempt, _), .receiving(let attempt, _):
            if stop != nil { return finish(failing: stopError, releasing: attempt) }
            if error.isCancellation { return finish(failing: ConveyError.cancelled, releasing: attempt) }
            if let unauthorized = error as? HTTPError, unauthorized.isUnauthorized {
                if refreshedCredentials { return finish(failing: unauthorized, releasing: attempt) }
                state = .refreshingCredentials(after: unauthorized)
                return .refreshCredentials(unauthorized, release: attempt.hold)
            }
            return retry(after: error, at: now, retryInterval: retryInterval, releasing: attempt.hold)
        case .idle, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.attemptFailed), release: nil)
        }
    }

    /// The count `attemptFailed` would tell `retryInterval` after `error` now, or `nil` when it
    /// would not ask (a stop, a cancellation, a 401 the refresh rule owns): so a task's own rule,
    /// which runs elsewhere, is asked exactly where the machine asks it.
    func asksRetryInterval(after error: any Error) -> Int? {
        switch state {
        case .building, .exchanging, .receiving:
            if stop != nil || error.isCancellation { return nil }
            if let unauthorized = error as? HTTPError, unauthorized.isUnauthorized { return nil }
            return retryCount
        case .idle, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            return nil
        }
    }

    /// The credential refresh ended at `now`; `refreshed` says whether it produced new
    /// credentials, in which case the next attempt starts at once. A refresh that produced none
    /// ends the run with the 401 (one refresh, one retry, then unauthorized).
    mutating func credentialRefreshEnded(refreshed: Bool, at now: ContinuousClock.Instant) -> RunAction {
        switch state {
        case .refreshingCredentials(let unauthorized):
            refreshedCredentials = true
            if stop != nil { return finish(failing: stopError, releasing: nil) }
            _ = deadlinePassed(at: now)
            if stop != nil { return finish(failing: stopError, releasing: nil) }
            guard refreshed else { return finish(failing: unauthorized, releasing: nil) }
            return startNextAttempt()
        case .idle, .building, .exchanging, .receiving, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.credentialRefreshEnded), release: nil)
        }
    }

    /// The scheduled wait starts now: `launch` starts it, and the waiting state owns it. A
    /// stopped run launches no wait; `retryWaitEnded` then ends it.
    mutating func retryWaitStarting(launch: () -> any CancellableWork) -> RunAction {
        switch state {
        case .retryScheduled(let until):
            guard stop == nil else { return .fail(stopError, release: nil) }
            state = .waitingToRetry(until: until, wait: launch())
            return .proceed
        case .idle, .building, .exchanging, .receiving, .refreshingCredentials, .waitingToRetry, .finished:
            return .fail(reject(.retryWaitStarting), release: nil)
        }
    }

    /// The wait before the next attempt ended at `now`, by itself or because a stop cancelled it
    /// (or kept it from starting).
    mutating func retryWaitEnded(at now: ContinuousClock.Instant) -> RunAction {
        switch state {
        case .retryScheduled, .waitingToRetry:
            _ = deadlinePassed(at: now)
            if stop != nil { return finish(failing: stopError, releasing: nil) }
            return startNextAttempt()
        case .idle, .building, .exchanging, .receiving, .refreshingCredentials, .finished:
            return .fail(reject(.retryWaitEnded), release: nil)
        }
    }

    // MARK: - Around the run

    /// A step around the run sends the request again after the run's attempts ended: the run goes
    /// on with a new attempt, unless `stopped` (a stop that came after the attempts ended, which
    /// the machine, finished, did not take) or a stop before ended it.
    mutating func sendingAgain(stopped: Stop?) -> RunAction {
        switch state {
        case .finished:
            if let defectEnding { return .fail(defectEnding, release: nil) }
            if stop == nil, let stopped { stop = stopped }
            guard stop == nil else { return .fail(stopError, release: nil) }
            return startNextAttempt()
        case .idle, .building, .exchanging, .receiving, .refreshingCredentials, .retryScheduled, .waitingToRetry:
            return .fail(reject(.sendingAgain), release: nil)
        }
    }

    /// The run ended outside its attempts (a step around it answered or threw before the attempt
    /// built for it went out): what that attempt held is let go.
    mutating func abandon() -> (any AttemptHold)? {
        let held: (any AttemptHold)?
        switch state {
        case .building(let attempt), .exchanging(let attempt, _), .receiving(let attempt, _): held = attempt.hold
        case .idle, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished: held = nil
        }
        state = .finished
        return held
    }

    /// A defect in Convey (`ConveyDefect`) ends the run at once, whatever its state, letting go of
    /// what the attempt held: never retried.
    mutating func defect(_ error: any Error) -> RunAction {
        if defectEnding == nil { defectEnding = error }
        return .fail(error, release: abandon())
    }

    private mutating func retry(after error: any Error, at now: ContinuousClock.Instant,
                                retryInterval: (any Error, Int) -> TimeInterval?, releasing hold: (any AttemptHold)?) -> RunAction {
        guard let seconds = retryInterval(error, retryCount) else {
            state = .finished
            return .fail(error, release: hold)
        }
        let wait = Self.wait(seconds)
        // A wait that would end at or past the deadline only delays the same failure.
        if let deadline, now + wait >= deadline {
            state = .finished
            return .fail(error, release: hold)
        }
        state = .retryScheduled(until: now + wait)
        return .waitToRetry(wait, release: hold)
    }

    private mutating func startNextAttempt() -> RunAction {
        attemptNumber += 1
        state = .idle
        return .startAttempt
    }

    private mutating func finish(failing error: any Error, releasing attempt: Attempt?) -> RunAction {
        state = .finished
        return .fail(error, release: attempt?.hold)
    }

    private mutating func replaceAttempt(with attempt: Attempt) {
        switch state {
        case .building: state = .building(attempt)
        case .exchanging(_, let cancel): state = .exchanging(attempt, cancel: cancel)
        case .receiving(_, let reading): state = .receiving(attempt, reading: reading)
        case .idle, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished: break
        }
    }

    /// Records that `event` is not allowed in the current state, which stays as it is.
    private mutating func reject(_ event: Event) -> IllegalTransition {
        let rejection = IllegalTransition(event: event, phase: phase)
        rejections.append(rejection)
        return rejection
    }

    /// A task's retry interval as a wait: a negative or non-finite interval is no wait at all, and
    /// a century is as long as any wait gets (longer ones cannot be represented).
    static func wait(_ seconds: TimeInterval) -> Duration {
        guard seconds.isFinite, seconds > 0 else { return .zero }
        return .seconds(min(seconds, 100 * 365 * 86_400))
    }
}
