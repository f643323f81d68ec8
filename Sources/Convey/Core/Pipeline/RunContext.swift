import Foundation

/// One run as its steps share it: its plan, chain, observers and lifecycle, and the values
/// features keep for it under keys of their own (`RunValueKey`), as OkHttp's request tags do.
final class RunContext: Sendable {
    let plan: RunPlan
    let chain: Chain
    let observers: RunObservers
    /// The run's state machine, stops and deadline.
    let lifecycle: ActiveRun
    /// How the run was started: where it goes, whether the server hears of it, its first values.
    let start: RunStart
    private let values: InlineLocked<[ObjectIdentifier: any Sendable]>

    init(plan: RunPlan, chain: Chain, observers: RunObservers, lifecycle: ActiveRun, start: RunStart) {
        self.plan = plan
        self.chain = chain
        self.observers = observers
        self.lifecycle = lifecycle
        self.start = start
        values = InlineLocked(start.values.stored)
    }

    /// The value kept under `key`, if any.
    subscript<Key: RunValueKey>(key: Key.Type) -> Key.Value? {
        get { values.withLock { $0[ObjectIdentifier(key)] } as? Key.Value }
        set { values.withLock { $0[ObjectIdentifier(key)] = newValue } }
    }
}

/// A key of the values a feature keeps for a run (`RunContext`) or for one response
/// (`ExchangeTags`): the key is a type of the feature's own, so no two features share one.
protocol RunValueKey {
    associatedtype Value: Sendable
}

/// Values under `RunValueKey`s, as a run starts with them or a response carries them.
struct RunValues: Sendable {
    fileprivate(set) var stored: [ObjectIdentifier: any Sendable] = [:]

    init() {}

    subscript<Key: RunValueKey>(key: Key.Type) -> Key.Value? {
        get { stored[ObjectIdentifier(key)] as? Key.Value }
        set { stored[ObjectIdentifier(key)] = newValue }
    }
}

/// How a run starts, besides its task: to the task's URL or to one given whole (an outbox item's,
/// stored when it was queued), heard of by the server's `didFinish(task:response:error:)` or not
/// (a run that is one attempt of something the caller reports once), and with the values its
/// steps and observers read (`RunValueKey`).
struct RunStart: Sendable {
    /// The URL every attempt goes to, instead of the task's path under the server's remote.
    var url: URL?
    /// Whether the server's `didFinish(task:response:error:)` hears of the run.
    var reportsToServer = true
    /// Values for the run's steps and observers.
    var values = RunValues()

    init() {}
}
