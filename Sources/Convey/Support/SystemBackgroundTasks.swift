import Foundation
#if os(iOS) || os(tvOS) || os(visionOS)
import UIKit
#endif

/// The system's background tasks: `UIApplication`'s on iOS, tvOS and visionOS, found at run time
/// so that app extensions (where `UIApplication.shared` is unavailable) link and simply get none;
/// elsewhere none.
///
/// UIKit's calls are made on the main thread: at once when `begin` or `end` is called there (from
/// a `didEnterBackgroundNotification` handler, the task must be begun before the handler returns),
/// else as soon as the main thread runs them. `begin` returns a token at once, and the identifier
/// UIKit gives is kept for `end` (`BackgroundTaskLedger`).
struct SystemBackgroundTasks: BackgroundTasks {
    #if os(iOS) || os(tvOS) || os(visionOS)
    private static let ledger = BackgroundTaskLedger()

    func begin(name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken? {
        let token = Self.ledger.newToken()
        Self.onMainThread {
            guard let application = Self.application else {
                Self.ledger.forget(token)
                return
            }
            let identifier = application.beginBackgroundTask(withName: name) {
                // UIKit requires the task to end here; the owner is told, and its `end` finds nothing left.
                if let identifier = Self.ledger.take(token) { application.endBackgroundTask(UIBackgroundTaskIdentifier(rawValue: identifier)) }
                expired()
            }
            guard identifier != .invalid else {
                Self.ledger.forget(token)
                return
            }
            // Ended before UIKit began it (`end` ran first): end it now.
            if !Self.ledger.keep(identifier.rawValue, for: token) { application.endBackgroundTask(identifier) }
        }
        return token
    }

    func end(_ token: BackgroundTaskToken) {
        Self.onMainThread {
            guard let identifier = Self.ledger.take(token) else { return }
            Self.application?.endBackgroundTask(UIBackgroundTaskIdentifier(rawValue: identifier))
        }
    }

    /// Runs `work` on the main thread: at once when called there, else as soon as the main thread runs it.
    static func onMainThread(_ work: @escaping @MainActor @Sendable () -> Void) {
        if Thread.isMainThread {
            MainActor.assumeIsolated { work() }
        } else {
            DispatchQueue.main.async { MainActor.assumeIsolated { work() } }
        }
    }

    /// The app's `UIApplication`, or `nil` in an app extension.
    @MainActor
    static var application: UIApplication? {
        let selector = NSSelectorFromString("sharedApplication")
        guard UIApplication.responds(to: selector) else { return nil }
        return UIApplication.perform(selector)?.takeUnretainedValue() as? UIApplication
    }
    #else
    func begin(name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken? { nil }
    func end(_ token: BackgroundTaskToken) {}
    #endif
}

/// The identifiers the system gave Convey's background tasks, by token: tokens are made on any
/// thread when a task is asked for, identifiers kept when the system begins it and taken when it
/// ends. An `end` that comes before the system began the task (asked from another thread, while
/// the `begin` still waits for the main thread) is remembered, and the task ended as soon as it
/// begins; a task the system took back (expired) leaves nothing behind for its owner's later `end`.
final class BackgroundTaskLedger: Sendable {
    private enum Entry {
        /// Asked for; the system has not begun it yet.
        case asked
        /// Asked for and already ended by its owner: end it as soon as it begins.
        case endedBeforeBegun
        /// Begun, with the system's identifier.
        case running(Int)
    }

    private struct State {
        var next = 0
        var entries: [BackgroundTaskToken: Entry] = [:]
    }

    private let state = InlineLocked(State())

    /// A token for a task about to be asked for.
    func newToken() -> BackgroundTaskToken {
        state.withLock { state in
            state.next += 1
            let token = BackgroundTaskToken(identifier: state.next)
            state.entries[token] = .asked
            return token
        }
    }

    /// Keeps the identifier the system gave the task of `token`; `false` when its owner ended it
    /// first, and the caller ends it at once.
    func keep(_ identifier: Int, for token: BackgroundTaskToken) -> Bool {
        state.withLock { state in
            guard case .asked = state.entries[token] else {
                state.entries[token] = nil
                return false
            }
            state.entries[token] = .running(identifier)
            return true
        }
    }

    /// The identifier to end for `token`, or `nil`: not begun yet (then it is ended once it
    /// begins), already ended, or taken back by the system.
    func take(_ token: BackgroundTaskToken) -> Int? {
        state.withLock { state in
            switch state.entries[token] {
            case .running(let identifier):
                state.entries[token] = nil
                return identifier
            case .asked:
                state.entries[token] = .endedBeforeBegun
                return nil
            case .endedBeforeBegun, nil:
                return nil
            }
        }
    }

    /// Forgets `token`: the system gave no task for it.
    func forget(_ token: BackgroundTaskToken) {
        state.withLock { _ = $0.entries.removeValue(forKey: token) }
    }

    /// How many tasks the ledger is keeping track of.
    var count: Int { state.withLock { $0.entries.count } }
}
