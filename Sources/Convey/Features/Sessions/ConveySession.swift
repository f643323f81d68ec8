import Foundation

/// A run of a task in progress, from `download()` or `send()` until it returns, and the entry
/// points that cancel runs by tag, by type or all at once. A run executes in its caller's task;
/// cancelling it stops what it is waiting on (the exchange, a retry wait) and leaves the caller's
/// task alone.
///
/// ```swift
/// struct SearchTask: ServerTask {
///     let query: String
///     var path: String { "search" }
///     var sessionTag: String? { "search" }
/// }
/// ConveySession.cancel(sessionWithTag: "search")   // a new query replaces the old ones
/// ```
///
/// Cancelled runs end with `ConveyError.cancelled` (their `didFail` hook sees it); runs past their
/// total timeout end with `ConveyError.totalTimedOut`. Other runs are untouched.
@ConveyActor
public final class ConveySession {
    /// The task's `sessionTag`.
    public let tag: String?
    /// The type of the task being run.
    public let taskType: any DownloadingTask.Type
    /// When the run started.
    public let startedAt: Date

    private init(_ run: ActiveRun) {
        tag = run.tag
        taskType = run.taskType
        startedAt = run.startedAt
    }

    /// The runs in progress.
    public static var activeSessions: [ConveySession] { ActiveRuns.all.map(ConveySession.init) }

    /// Cancels every run whose task's `sessionTag` is `tag`; returns how many were cancelled.
    @discardableResult
    public static func cancel(sessionWithTag tag: String) -> Int {
        ActiveRuns.cancel { $0.tag == tag }
    }

    /// Cancels every run of a task type; returns how many were cancelled.
    @discardableResult
    public static func cancel<T: DownloadingTask>(tasksOfType type: T.Type) -> Int {
        ActiveRuns.cancel { $0.taskType == type }
    }

    /// Cancels every run in progress; returns how many were cancelled.
    @discardableResult
    public static func cancelAll() -> Int {
        ActiveRuns.cancel { _ in true }
    }
}
