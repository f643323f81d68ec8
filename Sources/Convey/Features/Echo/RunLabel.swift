/// What echo, records and spans call a run that is one part of something longer (an outbox item's
/// delivery): kept among the values the run starts with (`RunStart.values`), under its own key.
struct RunLabel: Sendable, Hashable, RunValueKey {
    typealias Value = RunLabel

    /// The task name records and spans carry: the task the app queued, not the one delivering it.
    var taskName: String
    /// What echo adds to each line about the run.
    var note: String
    /// The item the run delivers, which records carry.
    var item: String?

    /// The name records and spans give a run of `type` started as `start`: its label's, else the type's.
    static func taskName(of type: Any.Type, start: RunStart) -> String {
        start.values[RunLabel.self]?.taskName ?? String(describing: type)
    }
}
