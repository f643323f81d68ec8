import Foundation

/// Persists a `RecordedTask` for every attempt of a task whose echo style includes `.recorded`
/// (the default style), for later review.
///
/// Nothing is recorded until you give a server a recorder: a library must not write to disk
/// unless asked.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.recorder = TaskRecorder(folder: cachesFolder.appending(path: "convey-records"))
/// ```
///
/// Records are written on a background queue, never on `ConveyActor`, one JSON file each
/// (temporary file, then rename), so several processes may share a folder. After each write the
/// folder is pruned to `maxCount` records no older than `maxAge`. A file that cannot be read is
/// skipped, never fatal. Docs/recording.md describes the format.
public final class TaskRecorder: Sendable {
    /// The folder the records are written to; created on the first write.
    public let folder: URL
    /// The most records kept; older ones are removed after each write.
    public let maxCount: Int
    /// The oldest a record may get before it is removed.
    public let maxAge: Duration
    /// The most characters of a text body, or bytes of a binary body, kept per body; 0 keeps no bodies.
    public let bodyLimit: Int

    /// The largest `bodyLimit` accepted: 1,000,000, the longest body echo renders.
    public static let maximumBodyLimit = 1_000_000

    private let storage: RecordFolder
    private let queue: DispatchQueue
    private let failures = WriteFailures()
    private let now: @Sendable () -> Date

    /// Creates a recorder for a folder.
    ///
    /// - Parameters:
    ///   - folder: where records go; created when the first record is written.
    ///   - maxCount: the most records kept (at least 1). Default: 1,000.
    ///   - maxAge: how long a record is kept. Default: 7 days.
    ///   - bodyLimit: how much of each request and response body to keep, up to
    ///     `maximumBodyLimit`. Default: 0, no bodies: they may hold personal data.
    public convenience init(folder: URL, maxCount: Int = 1000, maxAge: Duration = .seconds(7 * 24 * 3600), bodyLimit: Int = 0) {
        self.init(folder: folder, maxCount: maxCount, maxAge: maxAge, bodyLimit: bodyLimit, now: { Date() })
    }

    /// Creates a recorder with its own clock, for tests of retention by age.
    init(folder: URL, maxCount: Int, maxAge: Duration, bodyLimit: Int, now: @escaping @Sendable () -> Date) {
        self.folder = folder
        self.maxCount = max(1, maxCount)
        self.maxAge = maxAge
        self.bodyLimit = min(max(0, bodyLimit), Self.maximumBodyLimit)
        self.storage = RecordFolder(url: folder)
        self.queue = DispatchQueue(label: "Convey.TaskRecorder", qos: .utility)
        self.now = now
    }

    /// Queues a record of one attempt and returns at once; the work happens on the recorder's queue.
    func record(_ attempt: AttemptRecord, taskName: String, serverName: String, redaction: Redaction) {
        let finishedAt = now()
        queue.async { [storage, failures, maxCount, maxAge, bodyLimit, now] in
            let record = RecordedTask(attempt: attempt, id: RecordFolder.newID(at: finishedAt), taskName: taskName,
                                      serverName: serverName, finishedAt: finishedAt, redaction: redaction, bodyLimit: bodyLimit)
            do {
                try storage.write(record)
            } catch {
                failures.note("Could not write \(record.id) to \(storage.url.path(percentEncoded: false)): \(error)")
            }
            storage.prune(maxCount: maxCount, maxAge: maxAge.timeInterval, now: now())
        }
    }

    /// Waits until every record queued so far is on disk. Call it before a command-line tool exits.
    public func flush() async {
        await onQueue { }
    }

    /// The records in the folder, newest first, after the writes queued so far. Unreadable files
    /// and records of an unknown format version are skipped.
    public func records() async -> [RecordedTask] {
        await onQueue { [storage] in storage.recordIDs().compactMap(storage.read(id:)) }
    }

    /// The record with this ID, or `nil` when there is none or it cannot be read.
    public func record(id: String) async -> RecordedTask? {
        await onQueue { [storage] in storage.read(id: id) }
    }

    /// The IDs of record files that cannot be read: corrupt, or of an unknown format version.
    public func unreadableRecordIDs() async -> [String] {
        await onQueue { [storage] in storage.recordIDs().filter { storage.read(id: $0) == nil } }
    }

    /// Removes every record in the folder, after the writes queued so far; returns how many.
    @discardableResult
    public func clear() async -> Int {
        await onQueue { [storage] in storage.removeAll() }
    }

    /// The most recent failure to write a record, or `nil` when every write so far worked.
    public var lastWriteFailure: String? { failures.last }

    private func onQueue<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }
}

/// The last write failure, readable from any thread.
private final class WriteFailures: @unchecked Sendable {
    private let lock = NSLock()
    private var message: String?

    func note(_ failure: String) { lock.withLock { message = failure } }

    var last: String? { lock.withLock { message } }
}
