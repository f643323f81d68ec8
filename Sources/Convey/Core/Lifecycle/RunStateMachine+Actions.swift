extension RunStateMachine {
    /// The events of a run's own steps, each a transition of the machine.
    enum Event: String, CaseIterable, Sendable {
        case attemptStarting, exchangeStarting, responseReceived, payloadReady
        case attemptFailed, credentialRefreshEnded, retryWaitStarting, retryWaitEnded
    }

    /// An event the machine's state does not allow: a defect in Convey, reported as the run's
    /// failure instead of a crash.
    struct IllegalTransition: Error, Equatable, CustomStringConvertible {
        /// The rejected event.
        let event: Event
        /// The phase the run was in, which the rejection left unchanged.
        let phase: Phase

        var description: String { "Convey internal error: \(event.rawValue) is not allowed while the run is \(phase)" }
    }

    /// What `TaskRunner` does after a step of an attempt.
    enum StepAction {
        /// Go on with the attempt.
        case proceed
        /// End the attempt with this error (the run was stopped, or the step was not allowed).
        case fail(any Error)

        /// Returns for `.proceed`; throws the error of `.fail`.
        func proceedOrThrow() throws {
            if case .fail(let error) = self { throw error }
        }
    }

    /// What `TaskRunner` does next, after an attempt ended, a credential refresh or a retry
    /// wait: the actions of its event → action loop, which starts with `.startAttempt`.
    enum RunAction {
        /// Start an attempt now: build, send, validate, make the payload.
        case startAttempt
        /// Ask the server to refresh its credentials after this 401.
        case refreshCredentials(HTTPError)
        /// Wait this long, where a stop can cancel the wait, before the next attempt.
        case waitToRetry(Duration)
        /// End the run with the attempt's payload: the success hooks run.
        case succeed
        /// End the run with this error: the failure hooks run.
        case fail(any Error)

        /// The error the run ends with, for `.fail`.
        var failure: (any Error)? {
            if case .fail(let error) = self { return error }
            return nil
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
