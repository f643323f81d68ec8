import Foundation

/// The life of one run as a value: where the run is, whether something stopped it from outside,
/// and what each event means for it. `TaskRunner` feeds it every event and carries out the
/// action each transition returns; the machine itself does nothing and never reads a clock, so
/// every rule about time is tested with instants a test picks.
///
/// A run builds an attempt, exchanges it with the server, decodes the response, and after a
/// failure refreshes credentials (once, after a 401) or waits and tries again, until it
/// finishes. A stop (cancellation by tag, type or the caller's task; the total deadline) is
/// remembered, cancels what the run waits on, and decides the error the run reports at its next
/// step: a run stopped by its deadline reports `ConveyError.timedOut` of kind `.total`, any
/// other stopped run `ConveyError.cancelled`, whatever its exchange brought back meanwhile.
struct RunStateMachine {
    /// Where a run is.
    enum State: Equatable {
        /// Building an attempt's request: its body, `willSendRequest`, the field checks.
        case building
        /// Waiting for the server's credential refresh after a 401.
        case refreshingCredentials
        /// Sending the request and receiving the response: the attempt's exchange is in flight.
        case exchanging
        /// The response is in: hooks, the status check and the payload (decoded, a file, a stream).
        case decoding
        /// Waiting until `until` before the next attempt.
        case waitingToRetry(until: ContinuousClock.Instant)
        /// Over: the run delivered its payload or reported its failure.
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
    private(set) var state: State = .building
    /// What stopped the run, once something did; the first stop stands.
    private(set) var stop: Stop?
    /// The attempt in progress, from 1.
    private(set) var attemptNumber = 1
    /// The total timeout, when the run has one.
    let totalTimeout: Duration?
    /// When the total timeout ends the run.
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

    /// Whether the run is over.
    var isFinished: Bool { state == .finished }

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
        if state == .finished { return .none }
        if stop == nil { stop = reason }
        switch state {
        case .exchanging: return .cancelExchange
        case .waitingToRetry: return .cancelRetryWait
        // Building and decoding run in the caller's task and the credential refresh is shared
        // with other runs: the stop ends the run at its next step.
        case .building, .refreshingCredentials, .decoding, .finished: return .none
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
        state = .building
        _ = deadlinePassed(at: now)
        return stop == nil ? .proceed : .fail(stopError)
    }

    /// The attempt's request is built and goes out to `url` now.
    mutating func exchangeStarting(url: URL?) -> StepAction {
        self.url = url
        guard stop == nil else { return .fail(stopError) }
        state = .exchanging
        return .proceed
    }

    /// The exchange brought back a response: its head, and its body when that is kept in memory.
    /// A response that arrives after a stop does not undo it.
    mutating func responseReceived() -> StepAction {
        guard stop == nil else { return .fail(stopError) }
        state = .decoding
        return .proceed
    }

    /// The attempt's payload is ready: the run succeeds, unless it was stopped meanwhile.
    mutating func payloadReady() -> StepAction {
        guard stop == nil else { return .fail(stopError) }
        state = .finished
        return .proceed
    }

    // MARK: - After a failed attempt

    /// The attempt failed with `error` at `now`: a credential refresh after a 401 (until one
    /// succeeds), another attempt after the wait `retryInterval` asks for when the deadline leaves
    /// time for it, or the end of the run with the error it reports. `retryInterval` is the task's
    /// rule (the error, the attempt number); it is not asked after a stop or a cancellation.
    mutating func attemptFailed(_ error: any Error, at now: ContinuousClock.Instant,
                                retryInterval: (any Error, Int) -> TimeInterval?) -> FailureAction {
        if stop != nil { return finish(failing: stopError) }
        if error.isCancellation { return finish(failing: ConveyError.cancelled) }
        if !refreshedCredentials, let unauthorized = error as? HTTPError, unauthorized.isUnauthorized {
            state = .refreshingCredentials
            return .refreshCredentials(unauthorized)
        }
        return retry(after: error, at: now, retryInterval: retryInterval)
    }

    /// The credential refresh after `unauthorized` ended at `now`; `refreshed` says whether it
    /// produced new credentials, in which case the next attempt starts at once.
    mutating func credentialRefreshEnded(refreshed: Bool, after unauthorized: HTTPError, at now: ContinuousClock.Instant,
                                         retryInterval: (any Error, Int) -> TimeInterval?) -> FailureAction {
        if stop != nil { return finish(failing: stopError) }
        guard refreshed else { return retry(after: unauthorized, at: now, retryInterval: retryInterval) }
        refreshedCredentials = true
        return startNextAttempt()
    }

    /// The wait before the next attempt ended at `now`, by itself or because a stop cancelled it.
    mutating func retryWaitEnded(at now: ContinuousClock.Instant) -> FailureAction {
        _ = deadlinePassed(at: now)
        if stop != nil { return finish(failing: stopError) }
        return startNextAttempt()
    }

    private mutating func retry(after error: any Error, at now: ContinuousClock.Instant,
                                retryInterval: (any Error, Int) -> TimeInterval?) -> FailureAction {
        guard let seconds = retryInterval(error, attemptNumber) else { return finish(failing: error) }
        let wait = Self.wait(seconds)
        // A wait that would end at or past the deadline only delays the same failure.
        if let deadline, now + wait >= deadline { return finish(failing: error) }
        state = .waitingToRetry(until: now + wait)
        return .waitToRetry(wait)
    }

    private mutating func startNextAttempt() -> FailureAction {
        attemptNumber += 1
        return .startNextAttempt
    }

    private mutating func finish(failing error: any Error) -> FailureAction {
        state = .finished
        return .fail(error)
    }

    /// A task's retry interval as a wait: a negative or non-finite interval is no wait at all, and
    /// a century is as long as any wait gets (longer ones cannot be represented).
    static func wait(_ seconds: TimeInterval) -> Duration {
        guard seconds.isFinite, seconds > 0 else { return .zero }
        return .seconds(min(seconds, 100 * 365 * 86_400))
    }
}
