/// The runs in progress: what `ConveySession.cancel(sessionWithTag:)`, `cancel(tasksOfType:)`,
/// `cancelAll()` and `activeSessions` reach.
@ConveyActor
enum ActiveRuns {
    private static var runs: [ObjectIdentifier: ActiveRun] = [:]

    /// Every run in progress.
    static var all: [ActiveRun] { Array(runs.values) }

    static func insert(_ run: ActiveRun) {
        runs[ObjectIdentifier(run)] = run
    }

    static func remove(_ run: ActiveRun) {
        runs[ObjectIdentifier(run)] = nil
    }

    /// Cancels the runs that match; returns how many were still going.
    static func cancel(where matches: (ActiveRun) -> Bool) -> Int {
        runs.values.filter(matches).reduce(0) { count, run in run.cancel() ? count + 1 : count }
    }
}
