import Foundation

/// The observers of one run and who the run is: how the pipeline tells them what happens. Empty
/// (and free) when the run has none.
struct RunObservers: Sendable {
    private let observers: [any RunObserver]
    /// The run's identity in its events.
    let runID: UInt64
    private let task: (any DownloadingTask)?

    /// No observers: every `emit` returns at once.
    static let none = RunObservers(observers: [], runID: 0, task: nil)

    private init(observers: [any RunObserver], runID: UInt64, task: (any DownloadingTask)?) {
        self.observers = observers
        self.runID = runID
        self.task = task
    }

    /// The observers of a run of `task`; `none` when there are none.
    init(_ observers: [any RunObserver], task: some DownloadingTask) {
        guard !observers.isEmpty else {
            self = .none
            return
        }
        self.init(observers: observers, runID: RunIDs.next(), task: task)
    }

    /// Whether anyone is watching.
    var isEmpty: Bool { observers.isEmpty }

    /// Tells every observer, in order, that `kind` happened in `attempt`. What an observer throws
    /// is dropped. The event is made only when someone is watching.
    func emit(_ kind: @autoclosure () -> RunEvent.Kind, attempt: Int) async {
        guard let task, !observers.isEmpty else { return }
        let event = RunEvent(runID: runID, task: task, attempt: attempt, kind: kind())
        for observer in observers {
            try? await observer.observe(event)
        }
    }
}

/// Numbers runs for their events, from 1.
private enum RunIDs {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var last: UInt64 = 0

    static func next() -> UInt64 {
        lock.withLock {
            last += 1
            return last
        }
    }
}
