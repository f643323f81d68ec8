import Foundation

/// What a run is made of beyond its task and the core's own stages: the app's steps and
/// observers, and what the server's features and the scopes the run started in add. Assembled
/// once, on `@ConveyActor`, while the run is planned; the runner and the stages read it, never
/// the features themselves.
struct RunParts: Sendable {
    /// Steps around the run, outermost first: the server's, then the task's.
    var runSteps: [any Interceptor] = []
    /// Stages between redirects and the app's exchange steps (the cache, upload progress), outermost first.
    var featureStages: [any ExchangeStage] = []
    /// Steps around each exchange on the wire, outermost first: the server's, then the task's.
    var exchangeSteps: [any Interceptor] = []
    /// Stages nearest the wire, after the app's steps (answers from a HAR file), outermost first.
    var wireStages: [any ExchangeStage] = []
    /// Observers, in order: the app's, then the features'.
    var observers: [any RunObserver] = []
    /// The most body bytes each exchange on the wire keeps for observers that record bodies
    /// (`WireDetail.keptBody`); 0 keeps none.
    var observedBodyLimit = 0
    /// What echo and records call the run, when it is part of something longer than its task.
    var label: RunLabel?
    /// The URL every attempt goes to, instead of one built under the server's remote.
    var url: URL?
    /// Whether the server's `didFinish(task:response:error:)` hears of this run: not when the run
    /// is one attempt of a longer delivery whose owner reports its outcome once.
    var reportsToServer = true
}

/// What echo and records call a run that is one part of something longer (an outbox item's delivery).
struct RunLabel: Sendable, Hashable {
    /// The task name records carry.
    var taskName: String
    /// What echo adds to each line about the run.
    var note: String
    /// The item the run delivers, which records carry.
    var item: String?
}

/// What a feature may read of a run while it is planned.
struct RunSetup {
    /// The server the run goes to.
    let server: ConveyServer
    /// The idle timeout of each attempt.
    let idleTimeout: Duration
    /// The most bytes a body held in memory may have.
    let sizeLimit: Int64?
    /// Whether the delivery keeps the body in memory (`download()`, `send()`).
    let keepsBodyInMemory: Bool
    /// What is known of the task's hooks.
    let hooks: KnownHooks
}

/// A feature's part in runs: asked once per run, while it is planned, what it adds to it. The
/// server lists the features that take part (`ConveyServer.builtInFeatures`); the core knows only
/// this protocol.
protocol RunFeature: Sendable {
    /// Adds what the feature does for a run of `task` to `parts`.
    @ConveyActor
    func join<Task: DownloadingTask>(_ parts: inout RunParts, task: Task, setup: RunSetup)
}

/// Parts added to the runs started inside a scope: HAR fixtures answering every run of a test,
/// an outbox item's attempt going to its URL under its label.
///
/// A task-local value, so it reaches every run started inside it (child tasks and `Task {}` too)
/// and nothing outside it; a scope for one task type leaves runs of other types (a token fetch
/// started from a hook) as they are. A run reads its scopes once, when it is planned. A scope
/// inside another joins first: its stages are outermost, nearer the run.
struct RunScope: Sendable {
    /// The type of task whose runs the scope changes; `nil` for every run.
    let taskType: ObjectIdentifier?
    /// Adds the scope's parts to a run.
    let join: @Sendable (inout RunParts) -> Void

    /// The scopes around the current task, outermost first.
    @TaskLocal static var current: [RunScope] = []

    /// Runs `operation` with `scope` around every run started inside it.
    static func with<Result>(_ scope: RunScope, isolation: isolated (any Actor)? = #isolation,
                             _ operation: () async throws -> Result) async rethrows -> Result {
        try await $current.withValue(current + [scope], operation: operation, isolation: isolation)
    }

    /// Adds the parts of every scope around the current task that applies to `type`, innermost first.
    static func join(_ parts: inout RunParts, for type: Any.Type) {
        let scopes = current
        guard !scopes.isEmpty else { return }
        let identifier = ObjectIdentifier(type)
        for scope in scopes.reversed() where scope.taskType == nil || scope.taskType == identifier {
            scope.join(&parts)
        }
    }
}
