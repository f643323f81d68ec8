import Foundation

/// A file lock Convey holds that can be let go of while the app is suspended, and taken again
/// afterwards: an outbox's folder lock, a download's claim on its partial file.
protocol ReleasableFileLock: AnyObject, Sendable {
    /// Lets go of the lock (and stops what needs it).
    func releaseForSuspension() async
    /// Takes the lock again (or gives up what it was for, when another holder took it meanwhile).
    func retakeAfterSuspension() async
}

/// Every releasable file lock of the process, held weakly, released and retaken together in the
/// order asked for (`FileLocks`). On iOS, tvOS and visionOS, an app's own registry does it by
/// itself when the app goes to the background and comes back (`UIApplication`'s
/// `didEnterBackgroundNotification` and `willEnterForegroundNotification`; app extensions get
/// neither and call `FileLocks`).
final class FileLockRegistry: @unchecked Sendable {  // guarded by: `state`'s lock; the lifecycle observers (not Sendable) are set in init and read only in deinit
    /// The process's registry.
    static let shared = FileLockRegistry(followsAppLifecycle: true)

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

    /// Adds a lock; when the locks are released now, it is released too.
    func register(_ holder: any ReleasableFileLock) {
        let releasesAtOnce: Bool = state.withLock { state in
            state.holders = state.holders.filter { $0.value.holder != nil }
            state.holders[ObjectIdentifier(holder)] = Weak(holder: holder)
            return state.released
        }
        if releasesAtOnce { Task { await holder.releaseForSuspension() } }
    }

    /// Lets go of every lock; returns once they are all let go of.
    func releaseAll() async {
        await perform(releasing: true)
    }

    /// Takes every lock again; returns once each has been taken or given up.
    func retakeAll() async {
        await perform(releasing: false)
    }

    private func perform(releasing: Bool) async {
        let task: Task<Void, Never> = state.withLock { state in
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
        await task.value
    }

    private func currentHolders() -> [any ReleasableFileLock] {
        state.withLock { $0.holders.values.compactMap(\.holder) }
    }

    #if os(iOS) || os(tvOS) || os(visionOS)
    /// Releases the locks when the app goes to the background (within a background task, so the
    /// release finishes before the app is suspended) and retakes them when it comes back.
    private func observeAppLifecycle() -> [any NSObjectProtocol] {
        let center = NotificationCenter.default
        // By their strings, the constants' values: UIKit's constants are isolated to the main
        // actor in some SDKs, and this runs anywhere.
        let didEnterBackground = Notification.Name("UIApplicationDidEnterBackgroundNotification")
        let willEnterForeground = Notification.Name("UIApplicationWillEnterForegroundNotification")
        let background = center.addObserver(forName: didEnterBackground, object: nil, queue: nil) { [weak self] _ in
            guard let self else { return }
            let tasks = SystemBackgroundTasks()
            let token = tasks.begin(name: "Convey releasing file locks") {}
            Task {
                await self.releaseAll()
                if let token { tasks.end(token) }
            }
        }
        let foreground = center.addObserver(forName: willEnterForeground, object: nil, queue: nil) { [weak self] _ in
            guard let self else { return }
            Task { await self.retakeAll() }
        }
        return [background, foreground]
    }
    #endif
}
