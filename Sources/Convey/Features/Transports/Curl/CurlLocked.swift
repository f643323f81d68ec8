#if os(Linux) && canImport(CConveyCurlShim)
import Foundation

/// A value behind a pthread mutex (`NSLock`), for what senders' threads and an event loop share:
/// the loop's inbox, a pool's queues and idle handles.
///
/// Not Synchronization's `Mutex`: that one locks with futex calls ThreadSanitizer does not
/// intercept, so a sanitizer run would see no order between the threads and report every access
/// it guards as a race; a pthread mutex it understands, so the sanitizer checks the whole hand-off.
final class CurlLocked<Value>: @unchecked Sendable {  // guarded by: its NSLock
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` on the value, holding the lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
#endif
