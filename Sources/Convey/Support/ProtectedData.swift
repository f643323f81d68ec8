import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files under the system's data protection (iOS, watchOS, visionOS: a locked device, or before
/// the first unlock after a restart) fail to open with `EPERM` or `EACCES` until the data is
/// available again. For Convey's own files that means "not now", never "damaged": no cache entry
/// is deleted and no outbox item is set aside for it.
///
/// Folders Convey creates get the class `completeUntilFirstUserAuthentication` on those
/// platforms: readable whenever the device has been unlocked once since it started, so an app
/// woken in the background (a push, a background refresh) can use them. An app that wants another
/// class creates the folder itself first, with the class it wants: Convey uses an existing folder
/// as it is, and the files it creates inside take the folder's class.
enum ProtectedData {
    /// Whether a failure's `errno` means the file's data is unavailable for now.
    static func isUnavailable(_ code: Int32?) -> Bool {
        code == EPERM || code == EACCES
    }

    /// Gives a folder Convey just created the default class (data protection platforms only).
    static func applyDefaultClass(toFolderAtPath path: String) {
        #if os(iOS) || os(watchOS) || os(visionOS)
        // A failure leaves the container's default class: the folder works either way.
        try? FileManager.default.setAttributes([.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication],
                                               ofItemAtPath: path)
        #endif
    }

    /// Calls `handler` each time the system says protected data became available (iOS and
    /// visionOS: `UIApplication.protectedDataDidBecomeAvailableNotification`, which app
    /// extensions get too), until the returned token is released. Elsewhere it never calls:
    /// callers also look again on a timer.
    static func whenAvailable(_ handler: @escaping @Sendable () -> Void) -> AvailabilityObservation {
        #if os(iOS) || os(visionOS)
        // By its string, the constant's value: UIKit's constant is isolated to the main actor in
        // some SDKs, and this runs anywhere.
        let name = Notification.Name("UIApplicationProtectedDataDidBecomeAvailable")
        let token = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { _ in handler() }
        return AvailabilityObservation { NotificationCenter.default.removeObserver(token) }
        #else
        return AvailabilityObservation {}
        #endif
    }

    /// An observation of `whenAvailable`: ends when released.
    final class AvailabilityObservation: @unchecked Sendable {  // guarded by: nothing to guard: its one closure is set in init and run once, in deinit
        // Holds only the closure that removes the observer, which captures the observer's token (not Sendable).
        private let end: () -> Void
        init(end: @escaping () -> Void) { self.end = end }
        deinit { end() }
    }
}

/// Failures injected into Convey's own file opens, as a locked device makes them: tests run as
/// root, which permission bits do not stop, so `EPERM` and `EACCES` are injected instead. Each
/// injection covers the files under one folder, so tests running in parallel do not see each
/// other's. Nothing is injected outside tests.
enum FileAccessFaults {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var rules: [UUID: (prefix: String, code: Int32)] = [:]

    /// Makes every open of a file under `folder` fail with `code` until the returned injection is removed.
    static func inject(_ code: Int32, under folder: String) -> Injection {
        let token = UUID()
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        lock.withLock { rules[token] = (prefix, code) }
        return Injection(token: token)
    }

    /// The `errno` an open of `path` fails with, when one is injected.
    static func injected(opening path: String) -> Int32? {
        lock.withLock {
            guard !rules.isEmpty else { return nil }
            return rules.values.first { path.hasPrefix($0.prefix) }?.code
        }
    }

    /// One injection.
    struct Injection: Sendable {
        let token: UUID

        /// Opens succeed again.
        func remove() {
            FileAccessFaults.lock.withLock { _ = FileAccessFaults.rules.removeValue(forKey: token) }
        }
    }
}
