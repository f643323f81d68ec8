/// A value behind a lock of its own: state several threads share, read and changed only while
/// holding it. The one place such state is declared `@unchecked Sendable`, so the types that
/// keep their state in a `Locked` are plainly `Sendable`.
final class Locked<Value> {
    private let lock = InlineLock()
    /// Behind `lock`.
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    /// The value, read or replaced holding the lock.
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    /// Runs `body` on the value holding the lock, and returns what it returns.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&stored) }
    }
}

// Every access to `stored` holds `lock`.
extension Locked: @unchecked Sendable where Value: Sendable {}
