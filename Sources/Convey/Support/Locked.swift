/// A value behind a lock, as an object of its own: state that closures and values share between
/// threads (a test's log, a counter a task and its hook both see). An object that keeps state of
/// its own keeps it in an `InlineLocked` instead, without this allocation.
final class Locked<Value: Sendable>: Sendable {
    private let state: InlineLocked<Value>

    init(_ value: Value) {
        state = InlineLocked(value)
    }

    /// The value, read or replaced holding the lock.
    var value: Value {
        get { state.value }
        set { state.set(newValue) }
    }

    /// Runs `body` on the value holding the lock, and returns what it returns.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try state.withLock(body)
    }
}
