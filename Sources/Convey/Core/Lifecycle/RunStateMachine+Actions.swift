extension RunStateMachine {
    /// The events of a run's own steps, each a transition of the machine.
    enum Event: String, CaseIterable, Sendable {
        case attemptStarting, holding, exchangeStarting, responseReceived, payloadReady
        case attemptFailed, credentialRefreshEnded, retryWaitStarting, retryWaitEnded, sendingAgain
    }

    /// An event the machine's state does not allow: a defect in Convey. The runner asserts on it
    /// in debug builds; in release builds it is the run's failure, which every path reports.
    struct IllegalTransition: Error, Equatable {
        /// The rejected event.
        let event: Event
        /// The phase the run was in, which the rejection left unchanged.
        let phase: Phase

        var description: String { "Convey internal error: \(event.rawValue) is not allowed while the run is \(phase)" }
    }

    /// What `TaskRunner` does next, after each event: the one action type of its event → action
    /// loop, which starts with `.startAttempt`. Within an attempt a step says `.proceed` or
    /// `.fail`; after it, the machine decides the next attempt, a refresh, a wait or the end. An
    /// action that ends an attempt names what the attempt held, for the runner to let go.
    enum RunAction {
        /// Go on with the attempt's next step.
        case proceed
        /// Start an attempt now: build, send, check, make the payload.
        case startAttempt
        /// Ask the server to refresh its credentials after this 401.
        case refreshCredentials(HTTPError, release: (any AttemptHold)?)
        /// Wait this long, where a stop can cancel the wait, before the next attempt.
        case waitToRetry(Duration, release: (any AttemptHold)?)
        /// End the run with the attempt's payload, made from what it holds: the success hooks run.
        case succeed(keeping: (any AttemptHold)?)
        /// End the run with this error: the failure hooks run.
        case fail(any Error, release: (any AttemptHold)?)

        /// The error the run ends with, for `.fail`.
        var failure: (any Error)? {
            if case .fail(let error, _) = self { return error }
            return nil
        }

        /// Returns for `.proceed` (and every action but `.fail`); throws the error of `.fail`.
        func proceedOrThrow() throws {
            if case .fail(let error, _) = self { throw error }
        }

        /// What the ended attempt held, to let go.
        var released: (any AttemptHold)? {
            switch self {
            case .proceed, .startAttempt, .succeed: nil
            case .refreshCredentials(_, let hold), .waitToRetry(_, let hold), .fail(_, let hold): hold
            }
        }
    }

    /// What stopping a run means for what its state owns.
    enum StopAction {
        /// Nothing to interrupt: the run notices the stop at its next step.
        case none
        /// Cancel this work the state owned: the attempt's exchange or the retry wait.
        case cancel(any CancellableWork)
    }
}

/// Work a run waits on and a stop cancels: an exchange's transfer, a task.
protocol CancellableWork: Sendable {
    func cancel()
}

extension Task: CancellableWork {}

/// What a delivery holds for one attempt beyond the exchange (a claimed partial file, a stream's
/// transfer): the run's machine keeps it, hands it back when the run succeeds, and has the runner
/// let it go when the attempt fails or the run stops.
protocol AttemptHold: Sendable {
    /// Lets go of what the attempt held, keeping only what a later attempt may resume.
    func release()
}
