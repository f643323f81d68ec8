/// Watches runs: receives each run's events (`RunEvent`), in order, as they happen. Echo,
/// recording and HAR capture are observers too.
///
/// ```swift
/// struct SlowRequestLog: RunObserver {
///     func observe(_ event: RunEvent) async throws {
///         if case .bodyFinished(let response) = event.kind, let total = response.metrics.total, total > .seconds(1) {
///             print("slow: \(response.request.method) \(response.request.url.path()) took \(total)")
///         }
///     }
/// }
///
/// configuration.observers = [SlowRequestLog()]
/// ```
///
/// Observers are called in the run's own task, one after the other in the order they are
/// configured, each event once: never on `@ConveyActor` and never on a transport's thread. A
/// server with none costs its runs nothing. What an observer throws is dropped: it never fails
/// or changes a run. Keep `observe` quick: a run waits for its observers before it goes on, so
/// one that blocks holds up the run it is called for (never other runs, which call it in their
/// own tasks); hand slow work (a network export, a disk write) to a queue or task of your own.
public protocol RunObserver: Sendable {
    /// Receives one event of a run.
    func observe(_ event: RunEvent) async throws
}
