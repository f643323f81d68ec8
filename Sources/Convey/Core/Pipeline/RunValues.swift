import Foundation

/// A key of the values a feature keeps for a run (`ActiveRun`) or for one response
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
