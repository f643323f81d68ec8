import Foundation

/// Lets Convey stop an exchange from outside the Swift task that awaits it: cancellation by tag or
/// type (`ConveySession`) and the total timeout. Runs execute in their caller's task, so these
/// cannot cancel that task; they cancel what the run is waiting on instead.
///
/// A transport registers how to stop its exchange once it has started it, and removes that before
/// it returns. A transport that ignores this is still stopped, but only when its exchange ends.
public final class TransportCancellation: @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false
    private var stop: (@Sendable () -> Void)?

    /// Creates a cancellation that has not fired.
    public init() {}

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { lock.withLock { cancelled } }

    /// Makes `stop` the way to end the current exchange; calls it at once if already cancelled.
    public func register(_ stop: @escaping @Sendable () -> Void) {
        let firesNow = lock.withLock {
            self.stop = stop
            return cancelled
        }
        if firesNow { stop() }
    }

    /// Forgets the current exchange's `stop`: call it before returning from the exchange.
    public func unregister() {
        lock.withLock { stop = nil }
    }

    /// Fires: stops the current exchange, if one is registered, and any registered later.
    public func cancel() {
        let current = lock.withLock {
            cancelled = true
            return stop
        }
        current?()
    }
}
