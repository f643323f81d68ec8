import Foundation

/// The life of one run as a value: where the run is, what that state owns, whether something
/// stopped it from outside, and what each event means for it. `TaskRunner` feeds it every event
/// and carries out the action each transition returns; the machine itself never reads a clock,
/// so every rule about time is tested with instants a test picks.
///
/// A run builds an attempt, exchanges it with the server, decodes the response, and after a
/// failure refreshes credentials (once, after a 401) or waits and tries again, until it
/// finishes. A stop (cancellation by tag, type or the caller's task; the total deadline) is
/// remembered, cancels what the current state owns (the exchange, the retry wait), and decides
/// the error the run reports at its next step: a run stopped by its deadline reports
/// `ConveyError.timedOut` of kind `.total`, any other stopped run `ConveyError.cancelled`,
/// whatever its exchange brought back meanwhile.
///
/// Every transition switches over every state. An event the current state does not allow (a
/// response while waiting to retry, a second `payloadReady`) is rejected: the state stays, the
/// rejection is recorded in `rejections`, and the action fails the run with `IllegalTransition`
/// rather than crashing the app.
struct RunStateMachine {
    /// Where a run is, with what that state owns.
    enum State {
        /// No attempt in progress: before the first, or once a refresh or wait decided on the next.
        case idle
        /// Building an attempt's request: its body, `willSendRequest`, the field checks.
        case building
        /// Sending the request and receiving the response: the attempt's exchange, which a stop cancels.
        case exchanging(any CancellableWork)
        /// The response is in: hooks, the status check and the payload (decoded, a file, a stream).
        case decoding
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
        case idle, building, exchanging, decoding, refreshingCredentials
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
    /// The total timeout, when the run has one.
    let totalTimeout: Duration?
    /// When the total timeout ends the run (and a stream that asked for it, `RunDeadline`).
    let deadline: ContinuousClock.Instant?
    /// Whether a credential refresh already produced new credentials for this run.
    private var refreshedCredentials = false
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
        case .decoding: .decoding
        case .refreshingCredentials: .refreshingCredentials
        case .retryScheduled(let until): .retryScheduled(until: until)
        case .waitingToRetry(let until, _): .waitingToRetry(until: until)
        case .finished: .finished
        }
    }

    /// Whether the run is over.
    var isFinished: Bool { phase == .finished }

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
        case .exchanging(let exchange): return .cancel(exchange)
        case .waitingToRetry(_, let wait): return .cancel(wait)
        // Building and decoding run in the caller's task, the credential refresh is shared with
        // other runs, and a scheduled wait has not started: the stop ends the run at its next step.
        case .idle, .building, .decoding, .refreshingCredentials, .retryScheduled, .finished: return .none
        }
    }

    /// The error a stopped run reports: a total timeout when its deadline stopped it, else a cancellation.
    var stopError: any Error {
        switch stop {
        case .deadlinePassed:
            ConveyError.timedOut(TimeoutFailure(kind: .total, limit: totalTimeout ?? .zero, url: url))
        case .cancelled, nil:
            ConveyError.cancelled
        }
    }

    // MARK: - The steps of an attempt

    /// An attempt starts building its request at `now`; none starts once the deadline has passed.
    mutating func attemptStarting(at now: ContinuousClock.Instant) -> StepAction {
        switch state {
        case .idle:
            state = .building
            _ = deadlinePassed(at: now)
            return stop == nil ? .proceed : .fail(stopError)
        case .building, .exchanging, .decoding, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.attemptStarting))
        }
    }

    /// The attempt's request is built and goes out to `url` now: `launch` starts the exchange,
    /// which the exchanging state owns. A stopped run launches nothing.
    mutating func exchangeStarting(url: URL?, launch: () -> any CancellableWork) -> StepAction {
        switch state {
        case .building:
            self.url = url
            guard stop == nil else { return .fail(stopError) }
            state = .exchanging(launch())
            return .proceed
        case .idle, .exchanging, .decoding, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.exchangeStarting))
        }
    }

    /// The exchange brought back a response: its head, and its body when that is kept in memory.
    /// A response that arrives after a stop does not undo it.
    mutating func responseReceived() -> StepAction {
        switch state {
        case .exchanging:
            guard stop == nil else { return .fail(stopError) }
            state = .decoding
            return .proceed
        case .idle, .building, .decoding, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.responseReceived))
        }
    }

    /// The attempt's payload is ready: the run succeeds, unless it was stopped meanwhile.
    mutating func payloadReady() -> RunAction {
        switch state {
        case .decoding:
            guard stop == nil else { return finish(failing: stopError) }
            state = .finished
            return .succeed
        case .idle, .building, .exchanging, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.payloadReady))
        }
    }

    // MARK: - After a failed attempt

    /// The attempt failed with `error` at `now`, while building, exchanging or decoding: a
    /// credential refresh after a 401 (until one succeeds), another attempt after the wait
    /// `retryInterval` asks for when the deadline leaves time for it, or the end of the run with
    /// the error it reports. `retryInterval` is the task's rule (the error, the attempt number);
    /// it is not asked after a stop or a cancellation.
    mutating func attemptFailed(_ error: any Error, at now: ContinuousClock.Instant,
                                retryInterval: (any Error, Int) -> TimeInterval?) -> RunAction {
        switch state {
        case .building, .exchanging, .decoding:
            if stop != nil { return finish(failing: stopError) }
            if error.isCancellation { return finish(failing: ConveyError.cancelled) }
            if !refreshedCredentials, let unauthorized = error as? HTTPError, unauthorized.isUnauthorized {
                state = .refreshingCredentials(after: unauthorized)
                return .refreshCredentials(unauthorized)
            }
            return retry(after: error, at: now, retryInterval: retryInterval)
        case .idle, .refreshingCredentials, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.attemptFailed))
        }
    }

    /// The credential refresh ended at `now`; `refreshed` says whether it produced new
    /// credentials, in which case the next attempt starts at once.
    mutating func credentialRefreshEnded(refreshed: Bool, at now: ContinuousClock.Instant,
                                         retryInterval: (any Error, Int) -> TimeInterval?) -> RunAction {
        switch state {
        case .refreshingCredentials(let unauthorized):
            if stop != nil { return finish(failing: stopError) }
            guard refreshed else { return retry(after: unauthorized, at: now, retryInterval: retryInterval) }
            refreshedCredentials = true
            return startNextAttempt()
        case .idle, .building, .exchanging, .decoding, .retryScheduled, .waitingToRetry, .finished:
            return .fail(reject(.credentialRefreshEnded))
        }
    }

    /// The scheduled wait starts now: `launch` starts it, and the waiting state owns it. A
    /// stopped run launches no wait; `retryWaitEnded` then ends it.
    mutating func retryWaitStarting(launch: () -> any CancellableWork) -> StepAction {
        switch state {
        case .retryScheduled(let until):
            guard stop == nil else { return .fail(stopError) }
            state = .waitingToRetry(until: until, wait: launch())
            return .proceed
        case .idle, .building, .exchanging, .decoding, .refreshingCredentials, .waitingToRetry, .finished:
            return .fail(reject(.retryWaitStarting))
        }
    }

    /// The wait before the next attempt ended at `now`, by itself or because a stop cancelled it
    /// (or kept it from starting).
    mutating func retryWaitEnded(at now: ContinuousClock.Instant) -> RunAction {
        switch state {
        case .retryScheduled, .waitingToRetry:
            _ = deadlinePassed(at: now)
            if stop != nil { return finish(failing: stopError) }
            return startNextAttempt()
        case .idle, .building, .exchanging, .decoding, .refreshingCredentials, .finished:
            return .fail(reject(.retryWaitEnded))
        }
    }

    private mutating func retry(after error: any Error, at now: ContinuousClock.Instant,
                                retryInterval: (any Error, Int) -> TimeInterval?) -> RunAction {
        guard let seconds = retryInterval(error, attemptNumber) else { return finish(failing: error) }
        let wait = Self.wait(seconds)
        // A wait that would end at or past the deadline only delays the same failure.
        if let deadline, now + wait >= deadline { return finish(failing: error) }
        state = .retryScheduled(until: now + wait)
        return .waitToRetry(wait)
    }

    private mutating func startNextAttempt() -> RunAction {
        attemptNumber += 1
        state = .idle
        return .startAttempt
    }

    private mutating func finish(failing error: any Error) -> RunAction {
        state = .finished
        return .fail(error)
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
