/// A defect in Convey itself: an event the run's machine does not allow, a runner that went
/// where it never should. It ends the run as it is, never retried; a debug build stops on it.
protocol ConveyDefect: Error, CustomStringConvertible {}

/// A defect in Convey's runner, reported as the run's failure in a release build.
struct RunnerDefect: ConveyDefect {
    let description: String
}

extension RunStateMachine.IllegalTransition: ConveyDefect {}

/// Where the runner reports a defect: `assertionFailure`, which stops a debug build, unless a
/// test that provokes one on purpose takes the reports instead (`$handler`).
enum Defects {
    /// Takes the reports of the runs started inside its scope, instead of stopping the process.
    @TaskLocal static var handler: (@Sendable (String) -> Void)?

    /// Reports `error` when it is a defect; any other error is a run's ordinary failure.
    static func assertNone(_ error: any Error) {
        guard let defect = error as? any ConveyDefect else { return }
        if let handler { handler(defect.description) } else { assertionFailure(defect.description) }
    }
}
