import Foundation
#if canImport(Synchronization) && os(Linux)
import Synchronization
#endif

/// A lock held inside the object it guards, for the objects made once per request: on Linux the
/// standard library's `Mutex`, with no allocation of its own (and its order told to
/// ThreadSanitizer, which does not see it: `ThreadSanitizerOrder`); elsewhere `NSLock` (`Mutex` needs
/// newer Apple systems than Convey supports). It guards state kept beside it, not inside it.
struct InlineLock: ~Copyable, @unchecked Sendable {  // the lock itself is the synchronization
    #if canImport(Synchronization) && os(Linux)
    private let mutex = Mutex(())

    /// Runs `body` holding the lock.
    borrowing func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        // The mutex's address is only the sanitizer's name for this lock, never read through.
        let key = withUnsafePointer(to: mutex) { UnsafeRawPointer($0) }
        return try mutex.withLock { _ throws -> sending Result in
            ThreadSanitizerOrder.acquired(key)
            defer { ThreadSanitizerOrder.releasing(key) }
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

/// A value behind a lock, both held inside the object that keeps them: what a `Sendable` class
/// shares between threads, with no allocation of its own on Linux (the standard library's
/// `Mutex`). Elsewhere an `NSLock` and the value in memory of its own.
struct InlineLocked<Value: Sendable>: ~Copyable, @unchecked Sendable {  // the lock itself is the synchronization: every access to the value holds it
    #if canImport(Synchronization) && os(Linux)
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` on the value holding the lock, and returns what it returns.
    borrowing func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        // The mutex's address is only the sanitizer's name for this lock, never read through.
        let key = withUnsafePointer(to: mutex) { UnsafeRawPointer($0) }
        return try mutex.withLock { (value: inout sending Value) throws -> sending Result in
            ThreadSanitizerOrder.acquired(key)
            defer { ThreadSanitizerOrder.releasing(key) }
            // The result is the caller's to share or not: the lock guards only the value.
            nonisolated(unsafe) let result = try body(&value)
            return result
        }
    }
    #else
    private let lock = NSLock()
    private let storage: UnsafeMutablePointer<Value>

    init(_ value: Value) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Runs `body` on the value holding the lock, and returns what it returns.
    borrowing func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&storage.pointee) }
    }
    #endif

    /// The value, read holding the lock.
    var value: Value { withLock { $0 } }

    /// Replaces the value, holding the lock.
    borrowing func set(_ newValue: Value) { withLock { $0 = newValue } }
}
