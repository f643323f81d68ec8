import Foundation

/// A test probe: which of `TaskRunner`'s functions on `@ConveyActor` a run entered, by task type,
/// in order, so that a test can count a run's visits to the actor.
///
/// Only debug builds record anything, and only for the task types a test watches (`watch(_:)`),
/// so memory stays bounded however many runs an app makes; in a release build `entered` does
/// nothing. Entries are kept per task type because tests run in parallel: a test that counts gives
/// its task a type of its own and runs it one run at a time.
enum ActorVisits {
    /// A function of `TaskRunner` isolated to `@ConveyActor`.
    enum Entry: String, Sendable {
        case start, build, didReceiveResponse, retryInterval, refreshCredentials, succeeded, failed
    }

    #if DEBUG
    private static let lock = NSLock()
    /// The watched types and what their runs entered; behind `lock`.
    nonisolated(unsafe) private static var entries: [ObjectIdentifier: [Entry]] = [:]

    /// Records `entry` for a run of `type`, when a test watches that type.
    static func entered(_ entry: Entry, for type: Any.Type) {
        lock.withLock { entries[ObjectIdentifier(type)]?.append(entry) }
    }

    /// Starts (or starts again) recording the entries of runs of `type`.
    static func watch(_ type: Any.Type) {
        lock.withLock { entries[ObjectIdentifier(type)] = [] }
    }

    /// What runs of `type` entered since `watch(_:)`, in order.
    static func entries(of type: Any.Type) -> [Entry] {
        lock.withLock { entries[ObjectIdentifier(type)] ?? [] }
    }

    /// The visits to the actor those entries make: each entry is one, except the build of a run's
    /// first attempt, which `start` calls while it is on the actor already.
    static func visits(of type: Any.Type) -> Int {
        let recorded = entries(of: type)
        let nested = zip(recorded, recorded.dropFirst()).count { $0 == .start && $1 == .build }
        return recorded.count - nested
    }
    #else
    /// Records nothing in a release build.
    @inline(__always)
    static func entered(_ entry: Entry, for type: Any.Type) {}
    #endif
}
