import Foundation

/// Writes a download's chunks to its partial file in order, on a serial queue of its own, so the
/// transport's thread (the curl event loop) never waits for the disk.
///
/// Holds at most `limit` bytes not yet written: a chunk that does not fit is refused, and the
/// sink refuses it in turn, which pauses the transfer until `whenReady` resumes it. The first
/// write that fails is kept; no later chunk is written, and `enqueue` and `finish` throw it.
final class DownloadWriter: Sendable {
    /// Writes bytes at an offset of the partial file.
    typealias Write = @Sendable (UnsafeRawBufferPointer, Int64) throws(FileFailure) -> Void

    /// How many bytes may wait for the disk before the transfer is paused.
    static var defaultLimit: Int { 4 << 20 }

    private let queue = DispatchQueue(label: "convey.download-writer")
    private let write: Write
    private let limit: Int
    /// Told on the writer's queue how far the file is written, after every chunk.
    private let progress: DownloadProgressHandler?
    private let state = InlineLocked(State())

    /// What waits for the disk, and the first failure.
    private struct State {
        var buffered = 0
        /// The size of the chunk last refused, which `whenReady` waits room for.
        var wanted = 0
        var failure: FileFailure?
        var waiting: (@Sendable () -> Void)?

        /// Whether the chunk last refused fits now, under `limit`.
        func hasRoom(under limit: Int) -> Bool { buffered == 0 || buffered + wanted <= limit }
    }

    init(limit: Int = DownloadWriter.defaultLimit, write: @escaping Write, progress: DownloadProgressHandler?) {
        self.limit = limit
        self.write = write
        self.progress = progress
    }

    /// Queues a copy of `bytes` for `offset` of a file of `totalBytes` (for progress); `false`
    /// when there is no room for them now.
    func enqueue(_ bytes: UnsafeRawBufferPointer, at offset: Int64, of totalBytes: Int64?) throws(FileFailure) -> Bool {
        let refusal: FileFailure?? = state.withLock { state in
            if let failure = state.failure { return .some(failure) }
            // A chunk larger than the whole buffer still goes through when nothing waits.
            guard state.buffered == 0 || state.buffered + bytes.count <= limit else {
                state.wanted = bytes.count
                return .some(nil)
            }
            state.buffered += bytes.count
            return nil
        }
        switch refusal {
        case .some(.some(let failure)): throw failure
        case .some(.none): return false
        case .none: break
        }
        let chunk = Data(bytes)
        queue.async { self.writeChunk(chunk, at: offset, of: totalBytes) }
        return true
    }

    /// Runs `operation` (a file call the head asks for, such as truncating the partial file) on
    /// the writer's queue, before any chunk queued later; a failure is kept like a write's.
    func perform(_ operation: @escaping @Sendable () throws(FileFailure) -> Void) {
        queue.async {
            guard self.state.withLock({ $0.failure == nil }) else { return }
            do throws(FileFailure) {
                try operation()
            } catch {
                self.state.withLock { if $0.failure == nil { $0.failure = error } }
            }
        }
    }

    /// Tells the progress handler, on the writer's queue (never the transport's thread), where the file is.
    func report(_ snapshot: DownloadProgress) {
        guard let progress else { return }
        queue.async { progress(snapshot) }
    }

    /// Calls `resume` once there is room for the chunk last refused, or a write failed: at once if so now.
    func whenReady(_ resume: @escaping @Sendable () -> Void) {
        let now: Bool = state.withLock { state in
            guard state.failure == nil, !state.hasRoom(under: limit) else { return true }
            state.waiting = resume
            return false
        }
        if now { resume() }
    }

    /// Waits for every queued chunk, then runs `last` (an `fsync`) on the writer's queue unless a
    /// write failed; throws the first failure.
    func finish(then last: @escaping @Sendable () throws(FileFailure) -> Void) async throws(FileFailure) {
        let failure: FileFailure? = await withCheckedContinuation { continuation in
            queue.async {
                if let failure = self.state.withLock({ $0.failure }) {
                    continuation.resume(returning: failure)
                    return
                }
                do throws(FileFailure) {
                    try last()
                    continuation.resume(returning: nil)
                } catch {
                    continuation.resume(returning: error)
                }
            }
        }
        if let failure { throw failure }
    }

    /// Waits for every queued chunk, so that the file can be let go of safely after a failed
    /// transfer, with all the bytes received (at most `limit` more) there for a resume.
    func drain() async {
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }

    // MARK: On the writer's queue

    private func writeChunk(_ chunk: Data, at offset: Int64, of totalBytes: Int64?) {
        let skips = state.withLock { $0.failure != nil }
        var failed: FileFailure?
        if !skips {
            let written = chunk.withUnsafeBytes { bytes in Result { () throws(FileFailure) in try write(bytes, offset) } }
            if case .failure(let error) = written { failed = error }
        }
        let resume: (@Sendable () -> Void)? = state.withLock { state in
            state.buffered -= chunk.count
            if let failed, state.failure == nil { state.failure = failed }
            guard let waiting = state.waiting, state.failure != nil || state.hasRoom(under: limit) else { return nil }
            state.waiting = nil
            return waiting
        }
        if !skips, failed == nil { progress?(DownloadProgress(bytesWritten: offset + Int64(chunk.count), totalBytes: totalBytes)) }
        resume?()
    }
}
