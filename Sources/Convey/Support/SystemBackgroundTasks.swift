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

    /// UIKit's identifiers by token; touched on the main thread only.
    private final class MainThreadIdentifiers: @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0
        private var identifiers: [BackgroundTaskToken: UIBackgroundTaskIdentifier] = [:]

        func newToken() -> BackgroundTaskToken {
            lock.withLock {
                next += 1
                return BackgroundTaskToken(identifier: next)
            }
        }

        func keep(_ identifier: UIBackgroundTaskIdentifier, for token: BackgroundTaskToken) {
            lock.withLock { identifiers[token] = identifier }
        }

        func take(_ token: BackgroundTaskToken) -> UIBackgroundTaskIdentifier? {
            lock.withLock { identifiers.removeValue(forKey: token) }
        }
    }
    #else
    func begin(name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken? { nil }
    func end(_ token: BackgroundTaskToken) {}
    #endif
}
