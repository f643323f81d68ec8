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
/// (temporary file, then rename), so several processes may share a folder. The folder is created
/// owner-only (0700) and every record file is owner-only (0600); no file is written or read
/// through a link. The folder is pruned
/// to `maxCount` records no older than `maxAge` on the first write and then every
/// `maxCount / 10` writes (at most 100), so it may briefly hold that many more. A file that cannot
/// be read is skipped, never fatal. Docs/recording.md describes the format.
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
    /// The most records waiting to be written; beyond it new records are dropped, so a recorder
    /// that falls behind never holds unbounded memory.
    public static let maximumBacklog = 1000

    private let storage: RecordFolder
    private let queue: DispatchQueue
    private let state = RecorderState()
    /// How many writes go between two prunes: listing the folder on every write would cost more
    /// than the write itself once it holds many records.
    private let pruneInterval: Int
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
        self.pruneInterval = max(1, min(self.maxCount / 10, 100))
        self.storage = RecordFolder(url: folder)
        self.queue = DispatchQueue(label: "Convey.TaskRecorder", qos: .utility)
        self.now = now
    }

    /// Queues a record of one attempt and returns at once: masking, rendering, encoding and
    /// writing happen on the recorder's queue. Bodies the recorder will not keep are let go here,
    /// and when more than `maximumBacklog` records wait, new ones are dropped and counted.
    func record(_ attempt: AttemptRecord, taskName: String, serverName: String, redaction: Redaction) {
        guard state.admit(backlogLimit: Self.maximumBacklog) else { return }
        let finishedAt = now()
        let sizes = (request: attempt.requestBody?.count ?? 0, response: attempt.responseBody?.count ?? 0)
        var kept = attempt
        if bodyLimit == 0 {
            kept.requestBody = nil
            kept.responseBody = nil
        }
        queue.async { [storage, state, maxCount, maxAge, bodyLimit, pruneInterval, now, kept] in
            var record = RecordedTask(attempt: kept, id: RecordFolder.newID(at: finishedAt), taskName: taskName, serverName: serverName,
                                      finishedAt: finishedAt, redaction: redaction, requestBodySize: sizes.request, responseBodySize: sizes.response)
            if bodyLimit > 0 { record = record.withBodies(of: kept, limit: bodyLimit, redaction: redaction) }
            do {
                try storage.write(record)
            } catch {
                state.noteFailure("Could not write \(record.id) to \(storage.url.path(percentEncoded: false)): \(error)")
            }
            if state.finishWrite(pruningEvery: pruneInterval) {
                storage.prune(maxCount: maxCount, maxAge: maxAge.timeInterval, now: now())
            }
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

    /// The most recent failure to write a record and the number of records dropped, or `nil`
    /// when every record so far was written.
    public var lastWriteFailure: String? { state.lastFailure }

    private func onQueue<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }
}

/// The recorder's mutable state, shared by the callers and the queue: the backlog, the writes
/// since the last prune, and what went wrong.
private final class RecorderState: Sendable {
    private let counts = InlineLocked(Counts())

    private struct Counts: Sendable {
        var failure: String?
        var dropped = 0
        var backlog = 0
        var writesSincePrune: Int?
    }

    /// Takes a record into the backlog, or counts it as dropped when the backlog is full.
    func admit(backlogLimit: Int) -> Bool {
        counts.withLock { counts in
            guard counts.backlog < backlogLimit else {
                counts.dropped += 1
                return false
            }
            counts.backlog += 1
            return true
        }
    }

    func noteFailure(_ message: String) { counts.withLock { $0.failure = message } }

    var lastFailure: String? {
        counts.withLock { counts in
            let dropped = counts.dropped
            let drops = dropped == 0 ? nil : "\(dropped) record\(dropped == 1 ? "" : "s") dropped: writing fell behind"
            return [counts.failure, drops].compactMap { $0 }.joined(separator: "; ").nilIfEmpty
        }
    }

    /// Counts a finished write; `true` when the folder is due for pruning (on the first write,
    /// then every `interval`).
    func finishWrite(pruningEvery interval: Int) -> Bool {
        counts.withLock { counts in
            counts.backlog -= 1
            let count = (counts.writesSincePrune ?? interval - 1) + 1
            counts.writesSincePrune = count >= interval ? 0 : count
            return count >= interval
        }
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
