import Foundation
#if os(Linux) && canImport(CConveyCurlShim)
internal import CConveyCurlShim
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Making writes survive a crash or a power loss: a file's bytes synced before it is renamed into
/// place, and the folder synced after, so that the rename itself is on disk. The outbox's items,
/// a download's finished file and HAR files are synced this way.
///
/// - **A thread of its own.** Every sync runs on one thread Convey starts for them
///   (`threadName`), never on the caller's: a sync waits for the drive, for milliseconds, and
///   must not hold one of Swift concurrency's few cooperative threads (two on a watch). Callers
///   on a queue of their own wait for it there (`sync(_:)`); callers in a task await it.
/// - **Through the drive's cache.** On Apple platforms `fsync` only hands the bytes to the drive,
///   whose cache may still lose them; `fcntl(F_FULLFSYNC)` asks the drive to write them through,
///   and is what is used there. A file system without it (some network and external volumes)
///   falls back to `fsync`, and the fallback is reported: counted (`fallbackCount`) and written
///   once per file system to standard error. On Linux, `fsync` itself flushes the drive's cache.
enum DurableFiles {
    /// The name of the thread syncs run on (short: Linux keeps 15 characters of a thread's name).
    static let threadName = "Convey syncs"

    /// Syncs an open file's bytes to the disk, on the sync thread, waiting for it; returns `0`,
    /// or the `errno` of the failure. Call it from a thread that may block (a queue of the
    /// caller's own), never from a task on the cooperative pool: there, use `perform`.
    /// `primitives` and `fallbacks` are the platform's calls and standard error, or in tests ones
    /// that fail on purpose and a log.
    static func sync(_ descriptor: Int32, primitives: Primitives = .system, fallbacks: FallbackReport = .standardError) -> Int32 {
        SyncThread.shared.run { syncHere(descriptor, path: nil, primitives: primitives, fallbacks: fallbacks) }
    }

    /// Syncs the folder at `path`, on the sync thread, waiting for it, so that files created,
    /// renamed or removed in it stay so.
    static func syncFolder(atPath path: String) throws(FileFailure) {
        let failure = SyncThread.shared.run { () -> FileFailure? in
            let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { return FileFailure(path: path, action: "open the folder", code: errno) }
            defer { close(descriptor) }
            let code = syncHere(descriptor, path: path, primitives: .system, fallbacks: .standardError)
            // Some file systems cannot sync a folder (EINVAL): their renames are as durable as they get.
            return code == 0 || code == EINVAL ? nil : FileFailure(path: path, action: "sync the folder", code: code)
        }
        if let failure { throw failure }
    }

    /// Runs blocking file work that syncs (`sync`, `syncFolder`) from a task: on a thread of the
    /// files' own, never the cooperative pool, and resumes with its result.
    static func perform<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            fileWork.async { continuation.resume(with: Swift.Result { try work() }) }
        }
    }

    /// Runs blocking file work that syncs from a task, and resumes with its result.
    static func perform<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            fileWork.async { continuation.resume(returning: work()) }
        }
    }

    /// Where `perform` runs work: a queue of Convey's files, not the cooperative pool.
    private static let fileWork = DispatchQueue(label: "Convey.files", qos: .utility, attributes: .concurrent)

    // MARK: On the sync thread

    /// How syncs are done: the platform's calls, or in tests ones that fail on purpose.
    struct Primitives: Sendable {
        /// The sync through the drive's cache (`F_FULLFSYNC`), returning `0` or the `errno`; `nil`
        /// where `fsync` is that already (Linux).
        var fullSync: (@Sendable (Int32) -> Int32)?
        /// `fsync`, returning `0` or the `errno`.
        var fsync: @Sendable (Int32) -> Int32

        static let system: Primitives = {
            let plain: @Sendable (Int32) -> Int32 = { descriptor in
                while posixFsync(descriptor) != 0 {
                    if errno != EINTR { return errno }
                }
                return 0
            }
            #if canImport(Darwin)
            return Primitives(fullSync: { fcntl($0, F_FULLFSYNC) == 0 ? 0 : errno }, fsync: plain)
            #else
            return Primitives(fullSync: nil, fsync: plain)
            #endif
        }()
    }

    /// How many syncs fell back from `F_FULLFSYNC` to `fsync` in this process.
    static var fallbackCount: Int { observation.fallbackCount }

    /// Watches every sync from now on: `observer` gets the name of the thread it ran on.
    /// Returns what stops it.
    static func observeSyncs(_ observer: @escaping @Sendable (String?) -> Void) -> @Sendable () -> Void {
        observation.add(observer)
    }

    private static let observation = SyncObservation()

    /// Where fallbacks from `F_FULLFSYNC` are reported: once per file system.
    final class FallbackReport: Sendable {
        private let write: @Sendable (String) -> Void
        private let reportedDevices = InlineLocked(Set<UInt64>())

        init(_ write: @escaping @Sendable (String) -> Void) {
            self.write = write
        }

        /// Standard error, as Convey's other warnings about the process's setup.
        static let standardError = FallbackReport { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }

        /// Reports a fallback on the file system of `descriptor`, unless it was reported already.
        func note(descriptor: Int32, path: String?, code: Int32) {
            var info = stat()
            let device = fstat(descriptor, &info) == 0 ? UInt64(truncatingIfNeeded: info.st_dev) : .max
            guard reportedDevices.withLock({ $0.insert(device).inserted }) else { return }
            let place = path.map { "the file system of \($0)" } ?? "a file system"
            write("Convey: F_FULLFSYNC failed on \(place) (\(String(cString: strerror(code)))): fell back to fsync, "
                  + "which may leave the bytes in the drive's cache")
        }
    }

    /// One sync, on the sync thread: through the drive's cache where there is a call for it,
    /// falling back to `fsync` (reported) when the file system refuses it.
    private static func syncHere(_ descriptor: Int32, path: String?, primitives: Primitives, fallbacks: FallbackReport) -> Int32 {
        observation.notify(Thread.current.name)
        if let fullSync = primitives.fullSync {
            let code = fullSync(descriptor)
            if code == 0 { return 0 }
            observation.countFallback()
            fallbacks.note(descriptor: descriptor, path: path, code: code)
        }
        return primitives.fsync(descriptor)
    }
}

/// `fsync(2)`, named apart from `Primitives.fsync`.
private func posixFsync(_ descriptor: Int32) -> Int32 {
    fsync(descriptor)
}

/// Who watches syncs, and how many fell back.
private final class SyncObservation: Sendable {
    private struct State {
        var observers: [UUID: @Sendable (String?) -> Void] = [:]
        var fallbacks = 0
    }

    private let state = InlineLocked(State())

    var fallbackCount: Int { state.withLock { $0.fallbacks } }

    func add(_ observer: @escaping @Sendable (String?) -> Void) -> @Sendable () -> Void {
        let token = UUID()
        state.withLock { $0.observers[token] = observer }
        return { [self] in state.withLock { $0.observers[token] = nil } }
    }

    func notify(_ threadName: String?) {
        for observer in state.withLock({ Array($0.observers.values) }) { observer(threadName) }
    }

    func countFallback() { state.withLock { $0.fallbacks += 1 } }
}

/// The thread syncs run on: started on first use, it runs the syncs handed to it in order.
private final class SyncThread: Sendable {
    static let shared = SyncThread()

    /// The jobs handed over and not begun yet, in order.
    private let jobs = InlineLocked([@Sendable () -> Void]())
    /// Signalled once per job handed over: the thread waits on it while there is none.
    private let handedOver = DispatchSemaphore(value: 0)

    private init() {
        Thread { [self] in loop() }.start()
    }

    /// Runs `work` on the sync thread and waits for its result (at once when already there).
    func run<Result: Sendable>(_ work: @escaping @Sendable () -> Result) -> Result {
        if Thread.current.threadDictionary[Self.marker] != nil { return work() }
        let done = DispatchSemaphore(value: 0)
        let slot = ResultSlot<Result>()
        let job: @Sendable () -> Void = {
            slot.put(work())
            done.signal()
        }
        jobs.withLock { $0.append(job) }
        handedOver.signal()
        done.wait()
        return slot.take()
    }

    /// Set in the sync thread's own dictionary: how `run` knows it is there already.
    private static let marker = "Convey.SyncThread"

    private func loop() {
        Thread.current.threadDictionary[Self.marker] = true
        // Named from the thread itself, so that the system's name (what debuggers, `top -H` and
        // `Thread.current.name` show) is set too: on Linux a name given before the start is not,
        // and the thread starts with the name of the one that made it (a dispatch worker's, say).
        // Foundation sets the system's name only once `start()` has recorded the thread, which
        // this line may run before: on Linux it is set here directly.
        Thread.current.name = DurableFiles.threadName
        #if os(Linux) && canImport(CConveyCurlShim)
        convey_name_current_thread(DurableFiles.threadName)
        #endif
        while true {
            handedOver.wait()
            // One signal per job appended, so there is one to take.
            guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            job()
        }
    }
}

/// Where the sync thread leaves a result for the thread that waits for it: written once, then
/// read once after the semaphore says it is there.
private final class ResultSlot<Value>: @unchecked Sendable {  // guarded by: the waiter's semaphore: written once on the sync thread before it is signalled, read once after
    private let storage = UnsafeMutablePointer<Value>.allocate(capacity: 1)

    func put(_ value: Value) { storage.initialize(to: value) }

    func take() -> Value {
        defer { storage.deallocate() }
        return storage.move()
    }
}
