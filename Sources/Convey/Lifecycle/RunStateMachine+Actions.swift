extension RunStateMachine {
    /// What `TaskRunner` does after a step of an attempt.
    enum StepAction {
        /// Go on with the attempt.
        case proceed
        /// End the attempt with this error (the run was stopped).
        case fail(any Error)

        /// Returns for `.proceed`; throws the error of `.fail`.
        func proceedOrThrow() throws {
            if case .fail(let error) = self { throw error }
        }
    }

    /// What `TaskRunner` does after an attempt failed, a credential refresh or a retry wait.
    enum FailureAction {
        /// Ask the server to refresh its credentials after this 401.
        case refreshCredentials(HTTPError)
        /// Wait this long, where a stop can cancel the wait, before the next attempt.
        case waitToRetry(Duration)
        /// Start the next attempt now.
        case startNextAttempt
        /// End the run with this error.
        case fail(any Error)

        /// The error the run ends with, for `.fail`.
        var failure: (any Error)? {
            if case .fail(let error) = self { return error }
            return nil
        }
    }

    /// What stopping a run means for what it waits on.
    enum StopAction: Equatable {
        /// Nothing to interrupt: the run notices the stop at its next step.
        case none
        /// Cancel the attempt's exchange in flight.
        case cancelExchange
        /// Cancel the wait before the next attempt.
        case cancelRetryWait
    }
}
