import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if os(iOS) || os(visionOS)
import UIKit
#endif

/// Files under the system's data protection (iOS, watchOS, visionOS: a locked device, or before
/// the first unlock after a restart) fail to open with `EPERM` or `EACCES` until the data is
/// available again. For Convey's own files that means "not now", never "damaged": no cache entry
/// is deleted and no outbox item is set aside for it.
///
/// A permission error is read as "not now" only where the system says so: on iOS and visionOS
/// when `UIApplication.isProtectedDataAvailable` is `false`; on watchOS, which offers no such
/// question, and in an app extension (no `UIApplication`), always, as data protection is then the
/// likely cause. Elsewhere (macOS, tvOS, Linux), and on iOS while protected data is available, a
/// permission error is what it says (a sandbox, privacy settings, an immutable file) and is
/// reported as one.
///
/// Folders Convey creates get the class `completeUntilFirstUserAuthentication` on those
/// platforms: readable whenever the device has been unlocked once since it started, so an app
/// woken in the background (a push, a background refresh) can use them. An app that wants another
/// class creates the folder itself first, with the class it wants: Convey uses an existing folder
/// as it is, and the files it creates inside take the folder's class.
enum ProtectedData {
    /// What the system says of protected data now.
    enum Availability: Sendable, Equatable {
        /// This system has no data protection (macOS, tvOS, Linux).
        case absent
        /// Protected data is readable: the device is unlocked.
        case available
        /// Protected data is not readable: the device is locked, or not unlocked since it started.
        case unavailable
        /// The system has data protection but cannot be asked (watchOS, an app extension), or has
        /// not answered yet.
        case unknown
    }

    /// Whether a failure with `errno` `code` means the file's data is unavailable for now, given
    /// what the system says of protected data: only a permission error, and only where protected
    /// data exists and is not known to be available.
    static func meansUnavailable(_ code: Int32?, availability: Availability) -> Bool {
        guard code == EPERM || code == EACCES else { return false }
        switch availability {
        case .unavailable, .unknown: return true
        case .available, .absent: return false
        }
    }

    /// Whether a failure to open, create or read the file at `path` with `errno` `code` means its
    /// data is unavailable for now (a locked device) rather than an error.
    static func isUnavailable(_ code: Int32?, path: String) -> Bool {
        meansUnavailable(code, availability: FileAccessFaults.lockedDevice(covering: path) ? .unavailable : systemAvailability)
    }

    /// Whether `failure` means its file's data is unavailable for now (a locked device) rather than an error.
    static func isUnavailable(_ failure: FileFailure) -> Bool {
        isUnavailable(failure.code, path: failure.path)
    }

    /// What the system says of protected data now.
    static var systemAvailability: Availability {
        #if os(iOS) || os(visionOS)
        ApplicationProtectedData.shared.availability
        #elseif os(watchOS)
        // WatchKit has no `isProtectedDataAvailable`.
        .unknown
        #else
        .absent
        #endif
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

    #if os(iOS) || os(visionOS)
    /// `UIApplication.isProtectedDataAvailable`, as the main thread last read it: read when first
    /// asked (at once on the main thread, else as soon as the main thread runs) and kept up to date
    /// by the system's notices, so that any thread can ask without waiting for the main thread.
    /// `unknown` until then, and in an app extension, which has no `UIApplication`.
    final class ApplicationProtectedData: @unchecked Sendable {  // guarded by: `known`'s lock; the observers are set in init and never read again (the process keeps it)
        static let shared = ApplicationProtectedData()

        private let known = InlineLocked<Bool?>(nil)
        private var observers: [any NSObjectProtocol] = []

        private init() {
            let center = NotificationCenter.default
            // By their strings, the constants' values: UIKit's constants are isolated to the main
            // actor in some SDKs, and this runs anywhere.
            let willBecomeUnavailable = Notification.Name("UIApplicationProtectedDataWillBecomeUnavailable")
            let didBecomeAvailable = Notification.Name("UIApplicationProtectedDataDidBecomeAvailable")
            observers = [
                center.addObserver(forName: willBecomeUnavailable, object: nil, queue: nil) { [weak self] _ in self?.known.set(false) },
                center.addObserver(forName: didBecomeAvailable, object: nil, queue: nil) { [weak self] _ in self?.known.set(true) },
            ]
            SystemBackgroundTasks.onMainThread { [weak self] in
                guard let application = SystemBackgroundTasks.application else { return }
                self?.known.set(application.isProtectedDataAvailable)
            }
        }

        var availability: Availability {
            known.value.map { $0 ? .available : .unavailable } ?? .unknown
        }
    }
    #endif

    /// An observation of `whenAvailable`: ends when released.
    final class AvailabilityObservation: @unchecked Sendable {  // guarded by: nothing to guard: its one closure is set in init and run once, in deinit
        // Holds only the closure that removes the observer, which captures the observer's token (not Sendable).
        private let end: () -> Void
        init(end: @escaping () -> Void) { self.end = end }
        deinit { end() }
    }
}

/// Failures injected into Convey's own file opens, as a locked device or a denied permission
/// makes them: tests run as root, which permission bits do not stop, so `EPERM` and `EACCES` are
/// injected instead. Each injection covers the files under one folder, so tests running in
/// parallel do not see each other's. Nothing is injected outside tests.
enum FileAccessFaults {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var rules: [UUID: (prefix: String, code: Int32, lockedDevice: Bool)] = [:]

    /// Makes every open of a file under `folder` fail with `code`, a plain permission error where
    /// the system has no data protection (Linux), until the returned injection is removed.
    static func inject(_ code: Int32, under folder: String) -> Injection {
        add(code, under: folder, lockedDevice: false)
    }

    /// Makes every open of a file under `folder` fail with `code`, and the protected data of those
    /// files unavailable as the system would say on a locked device, until the returned injection is removed.
    static func lockDevice(failing code: Int32 = EPERM, under folder: String) -> Injection {
        add(code, under: folder, lockedDevice: true)
    }

    private static func add(_ code: Int32, under folder: String, lockedDevice: Bool) -> Injection {
        let token = UUID()
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        lock.withLock { rules[token] = (prefix, code, lockedDevice) }
        return Injection(token: token)
    }

    /// The `errno` an open of `path` fails with, when one is injected.
    static func injected(opening path: String) -> Int32? {
        lock.withLock {
            guard !rules.isEmpty else { return nil }
            return rules.values.first { path.hasPrefix($0.prefix) }?.code
        }
    }

    /// Whether a locked device is injected for the file at `path`.
    static func lockedDevice(covering path: String) -> Bool {
        lock.withLock {
            guard !rules.isEmpty else { return false }
            return rules.values.contains { $0.lockedDevice && path.hasPrefix($0.prefix) }
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
