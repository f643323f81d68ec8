import Foundation

/// Keeps the app running while runs are in flight after it is backgrounded: a background-task
/// assertion (`UIApplication.beginBackgroundTask`, on iOS, tvOS and visionOS) begun when the first
/// run starts and ended after the last one ends, as Alamofire's `BackgroundAssertion` does. The
/// counting is here, platform-neutral; the UIKit calls are in `UIKitBackgroundTasks`.
///
/// A server opts in with `ServerConfiguration.finishesRunsInBackground`; its runs call
/// `runStarted()` when they start and `runEnded()` once when they end, however they end.
final class BackgroundRunAssertion: Sendable {
    /// The process's assertion, over the system's background tasks (none outside UIKit).
    static let shared = BackgroundRunAssertion(tasks: SystemBackgroundTasks())

    /// Runs in flight and the assertion held for them.
    private struct Holding {
        var runs = 0
        var held: BackgroundTaskToken?
        /// Who is told when the system takes the time back (`whenExpired`).
        var expiryHandlers: [UUID: @Sendable () -> Void] = [:]
    }

    private let tasks: any BackgroundTasks
    private let holding = InlineLocked(Holding())

    init(tasks: any BackgroundTasks) {
        self.tasks = tasks
    }

    /// A run started: the first one in flight begins the assertion.
    func runStarted() {
        let begins: Bool = holding.withLock { holding in
            holding.runs += 1
            return holding.runs == 1 && holding.held == nil
        }
        guard begins else { return }
        let token = tasks.begin(name: "Convey runs in flight") { [weak self] in self?.expired() }
        let endsAtOnce: BackgroundTaskToken? = holding.withLock { holding in
            // The last run may have ended while the assertion was being begun, or another begun meanwhile.
            guard holding.runs > 0, holding.held == nil else { return token }
            holding.held = token
            return nil
        }
        if let endsAtOnce { tasks.end(endsAtOnce) }
    }

    /// A run ended: the last one in flight ends the assertion.
    func runEnded() {
        let ending: BackgroundTaskToken? = holding.withLock { holding in
            holding.runs = max(0, holding.runs - 1)
            guard holding.runs == 0 else { return nil }
            defer { holding.held = nil }
            return holding.held
        }
        if let ending { tasks.end(ending) }
    }

    /// Runs in flight now.
    var runsInFlight: Int { holding.withLock { $0.runs } }

    /// Whether the assertion is held now.
    var isHeld: Bool { holding.withLock { $0.held != nil } }

    /// Calls `handler` each time the system takes the assertion's time back (not when it ends
    /// because the last run ended), until the returned observation is released: what the
    /// assertion kept running must stop now.
    func whenExpired(_ handler: @escaping @Sendable () -> Void) -> ExpiryObservation {
        let key = UUID()
        holding.withLock { $0.expiryHandlers[key] = handler }
        return ExpiryObservation { [weak self] in self?.holding.withLock { _ = $0.expiryHandlers.removeValue(forKey: key) } }
    }

    /// The system took the time back: the assertion must end now, runs in flight or not. The next
    /// run to start after they all ended begins a new one.
    private func expired() {
        let (ending, handlers): (BackgroundTaskToken?, [@Sendable () -> Void]) = holding.withLock { holding in
            defer { holding.held = nil }
            return (holding.held, Array(holding.expiryHandlers.values))
        }
        if let ending { tasks.end(ending) }
        for handler in handlers { handler() }
    }

    /// An observation of `whenExpired`: ends when released.
    final class ExpiryObservation: Sendable {
        private let end: @Sendable () -> Void
        init(end: @escaping @Sendable () -> Void) { self.end = end }
        deinit { end() }
    }
}

/// One background task the system granted.
struct BackgroundTaskToken: Sendable, Hashable {
    let identifier: Int
}

/// Where background-task assertions come from: the system's, or in tests a recorder.
protocol BackgroundTasks: Sendable {
    /// Begins an assertion; `expired` is called if the system takes the time back first.
    func begin(name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken?
    /// Ends an assertion `begin` returned.
    func end(_ token: BackgroundTaskToken)
}
