import Foundation
#if canImport(Synchronization) && os(Linux)
import Synchronization
#endif

/// A lock held inside the object it guards, for the objects made once per request: on Linux the
/// standard library's `Mutex`, with no allocation of its own; elsewhere `NSLock` (`Mutex` needs
/// newer Apple systems than Convey supports). It guards state kept beside it, not inside it.
struct InlineLock: ~Copyable, @unchecked Sendable {
    #if canImport(Synchronization) && os(Linux)
    private let mutex = Mutex(())

    /// Runs `body` holding the lock.
    borrowing func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        try mutex.withLock { _ throws -> sending Result in
            // The result is the caller's to share or not: the lock guards only the state beside it.
            nonisolated(unsafe) let result = try body()
            return result
        }
    }
    #else
    private let lock = NSLock()

    /// Runs `body` holding the lock.
    borrowing func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        try lock.withLock(body)
    }
    #endif

    init() {}
}
