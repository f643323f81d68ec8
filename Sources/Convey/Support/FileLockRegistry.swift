import Foundation
#if os(iOS) || os(tvOS) || os(visionOS)
import UIKit
#endif

/// A file lock Convey holds that can be let go of while the app is suspended, and taken again
/// afterwards: an outbox's folder lock, a download's claim on its partial file.
protocol ReleasableFileLock: AnyObject, Sendable {
    /// Lets go of the lock (and stops what needs it).
    func releaseForSuspension() async
    /// Takes the lock again (or gives up what it was for, when another holder took it meanwhile).
    func retakeAfterSuspension() async
}

/// Every releasable file lock of the process, held weakly, released and retaken together in the
/// order asked for (`FileLocks`): each release or retake, and the release of a lock registered
/// while the locks are released, waits for the one asked for before it.
///
/// On iOS, tvOS and visionOS, an app's own registry does it by itself: it releases the locks when
/// the app goes to the background (`UIApplication`'s `didEnterBackgroundNotification`) and when
/// the app was launched into the background (a push, a background task: its `applicationState`
/// when the registry is made), and retakes them when the app comes to the foreground
/// (`willEnterForegroundNotification`). App extensions get none of these and call `FileLocks`.
final class FileLockRegistry: @unchecked Sendable {  // guarded by: `state`'s lock; the lifecycle observers (not Sendable) are set in init and read only in deinit
    /// The process's registry.
    static let shared = FileLockRegistry(followsAppLifecycle: true)

    /// The registry `FileLocks` and new locks use: the process's, or in a test one of its own, so
    /// that releasing it leaves the other tests' locks alone.
    @TaskLocal static var current = FileLockRegistry.shared

    private struct State {
        var holders: [ObjectIdentifier: Weak] = [:]
        var released = false
        /// The last release or retake asked for: the next one waits for it, so they run in order.
        var last: Task<Void, Never>?
    }

    private let state = InlineLocked(State())
    private var lifecycleObservers: [any NSObjectProtocol] = []

    private struct Weak {
        weak var holder: (any ReleasableFileLock)?
    }

    init(followsAppLifecycle: Bool = false) {
        #if os(iOS) || os(tvOS) || os(visionOS)
        if followsAppLifecycle { lifecycleObservers = observeAppLifecycle() }
        #endif
    }

    deinit {
        for observer in lifecycleObservers { NotificationCenter.default.removeObserver(observer) }
    }

    /// Whether the locks are released now (a lock taken meanwhile is let go of at once).
    var isReleased: Bool { state.withLock { $0.released } }

    /// Adds a lock and returns whether the locks are released now: then it is released too, in
    /// order with the releases and retakes asked for before and after.
    @discardableResult
    func register(_ holder: any ReleasableFileLock) -> Bool {
        state.withLock { state in
            state.holders = state.holders.filter { $0.value.holder != nil }
            state.holders[ObjectIdentifier(holder)] = Weak(holder: holder)
            guard state.released else { return false }
            let previous = state.last
            state.last = Task {
                await previous?.value
                await holder.releaseForSuspension()
            }
            return true
        }
    }

    /// Lets go of every lock; returns once they are all let go of.
    func releaseAll() async {
        await enqueue(releasing: true).value
    }

    /// Takes every lock again; returns once each has been taken or given up.
    func retakeAll() async {
        await enqueue(releasing: false).value
    }

    /// The app went to the background, or was launched there: lets go of every lock within a
    /// background task of `tasks`, begun before this returns, so that the release finishes before
    /// the app is suspended.
    func appEnteredBackground(tasks: any BackgroundTasks) {
        let token = tasks.begin(name: "Convey releasing file locks") {}
        let release = enqueue(releasing: true)
        Task {
            await release.value
            if let token { tasks.end(token) }
        }
    }

    /// The app is coming to the foreground: takes every lock again.
    func appWillEnterForeground() {
        _ = enqueue(releasing: false)
    }

    /// Queues a release or a retake of every lock after the one asked for before it, and returns it.
    private func enqueue(releasing: Bool) -> Task<Void, Never> {
        state.withLock { state in
            state.released = releasing
            let previous = state.last
            let task = Task { [self] in
                await previous?.value
                for holder in currentHolders() {
                    if releasing { await holder.releaseForSuspension() } else { await holder.retakeAfterSuspension() }
                }
            }
            state.last = task
            return task
        }
    }

    private func currentHolders() -> [any ReleasableFileLock] {
        state.withLock { $0.holders.values.compactMap(\.holder) }
    }

    #if os(iOS) || os(tvOS) || os(visionOS)
    /// Releases the locks when the app goes to the background, or now when it was launched there,
    /// and retakes them when it comes back.
    private func observeAppLifecycle() -> [any NSObjectProtocol] {
        let center = NotificationCenter.default
        // By their strings, the constants' values: UIKit's constants are isolated to the main
        // actor in some SDKs, and this runs anywhere.
        let didEnterBackground = Notification.Name("UIApplicationDidEnterBackgroundNotification")
        let willEnterForeground = Notification.Name("UIApplicationWillEnterForegroundNotification")
        let background = center.addObserver(forName: didEnterBackground, object: nil, queue: nil) { [weak self] _ in
            self?.appEnteredBackground(tasks: SystemBackgroundTasks())
        }
        let foreground = center.addObserver(forName: willEnterForeground, object: nil, queue: nil) { [weak self] _ in
            self?.appWillEnterForeground()
        }
        // Launched into the background (a push, a background task), the app gets no
        // didEnterBackground: its state says so. Read on the main thread, in order with the
        // notifications, which UIKit posts there.
        SystemBackgroundTasks.onMainThread { [weak self] in
            guard let application = SystemBackgroundTasks.application, application.applicationState == .background else { return }
            self?.appEnteredBackground(tasks: SystemBackgroundTasks())
        }
        return [background, foreground]
    }
    #endif
}
