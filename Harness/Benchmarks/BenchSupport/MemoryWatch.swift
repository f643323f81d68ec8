import Foundation

/// Samples resident memory every 50 ms while a workload runs, keeping the highest.
public final class MemoryWatch: @unchecked Sendable {  // guarded by: its NSLock, for `highest`; the sampler is set in init only
    private let lock = NSLock()
    private var highest: Double
    public let start: Double
    private var sampler: Task<Void, Never>?

    public init() {
        start = ProcessFigures.residentMB
        highest = start
        sampler = Task { [weak self] in
            while (try? await Task.sleep(for: .milliseconds(50))) != nil {
                guard let self else { return }
                let now = ProcessFigures.residentMB
                self.lock.withLock { self.highest = max(self.highest, now) }
            }
        }
    }

    /// Stops sampling; returns the growth above the start at its peak and at the end, in MB.
    public func stop() -> (peak: Double, end: Double) {
        sampler?.cancel()
        let end = ProcessFigures.residentMB
        return lock.withLock { (max(highest, end) - start, end - start) }
    }
}
