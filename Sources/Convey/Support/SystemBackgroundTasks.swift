import Foundation
#if os(iOS) || os(tvOS) || os(visionOS)
import UIKit
#endif

/// The system's background tasks: `UIApplication`'s on iOS, tvOS and visionOS, found at run time
/// so that app extensions (where `UIApplication.shared` is unavailable) link and simply get none;
/// elsewhere none.
///
/// UIKit's calls are made on the main thread, in the order they were asked for; `begin` returns a
/// token at once, and the identifier UIKit gives is kept for `end`.
struct SystemBackgroundTasks: BackgroundTasks {
    #if os(iOS) || os(tvOS) || os(visionOS)
    private static let identifiers = MainThreadIdentifiers()

    func begin(name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken? {
        let token = Self.identifiers.newToken()
        DispatchQueue.main.async {
            MainActor.assumeIsolated {
                guard let application = Self.application else { return }
                let identifier = application.beginBackgroundTask(withName: name) {
                    // UIKit requires the task to end here; the owner is told, and its `end` finds nothing left.
                    if let identifier = Self.identifiers.take(token) { application.endBackgroundTask(identifier) }
                    expired()
                }
                if identifier != .invalid { Self.identifiers.keep(identifier, for: token) }
            }
        }
        return token
    }

    func end(_ token: BackgroundTaskToken) {
        DispatchQueue.main.async {
            MainActor.assumeIsolated {
                guard let identifier = Self.identifiers.take(token) else { return }
                Self.application?.endBackgroundTask(identifier)
            }
        }
    }

    /// The app's `UIApplication`, or `nil` in an app extension.
    @MainActor
    private static var application: UIApplication? {
        let selector = NSSelectorFromString("sharedApplication")
        guard UIApplication.responds(to: selector) else { return nil }
        return UIApplication.perform(selector)?.takeUnretainedValue() as? UIApplication
    }

    /// UIKit's identifiers by token (kept as their raw values); tokens are made on any thread,
    /// identifiers kept and taken on the main thread.
    private final class MainThreadIdentifiers: Sendable {
        private struct State {
            var next = 0
            var identifiers: [BackgroundTaskToken: Int] = [:]
        }

        private let state = InlineLocked(State())

        func newToken() -> BackgroundTaskToken {
            state.withLock { state in
                state.next += 1
                return BackgroundTaskToken(identifier: state.next)
            }
        }

        func keep(_ identifier: UIBackgroundTaskIdentifier, for token: BackgroundTaskToken) {
            state.withLock { $0.identifiers[token] = identifier.rawValue }
        }

        func take(_ token: BackgroundTaskToken) -> UIBackgroundTaskIdentifier? {
            state.withLock { $0.identifiers.removeValue(forKey: token) }.map { UIBackgroundTaskIdentifier(rawValue: $0) }
        }
    }
    #else
    func begin(name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken? { nil }
    func end(_ token: BackgroundTaskToken) {}
    #endif
}
