import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The disk tier: one self-verifying file per entry (see `CacheEntryFormat`), named by the
/// SHA-256 of its key under a two-hex-digit shard folder (`ab/abcdef…`).
///
/// Crash- and multi-process-safe by construction: a file is written under a unique temporary
/// name in the same folder and renamed over the final name, so a reader (in this process or
/// another) sees a whole old file or a whole new one, never a mix; a crash leaves at most a
/// temporary file, which a sweep removes. Size is kept under the limit by a background sweep that
/// deletes the least recently used files (by modification time, which writes and reads set to
/// the cache clock's time).
///
/// The folder's contents are input, not trust (several processes may share it): every file is
/// opened without following a link and only when it is a regular file, without blocking (a FIFO
/// in an entry's place is refused, not waited on), its size checked against the limit before it
/// is read, and every length in it checked (`CacheEntryFormat`). What is not a sound entry is
/// never served, and removed when it can be (a folder cannot). The folder and its shard folders are created owner-only (0700),
/// entry files owner-only (0600) and exclusively; a shard that is not a real folder (a link) is
/// neither written to nor swept.
///
/// Reads run on the calling thread, never on an actor, so reads of different entries proceed in
/// parallel. Changes (writes, removals) run in order on one serial queue, so a removal can never
/// be overtaken by an older write, and callers may queue a write without waiting for the disk.
/// The only other shared state, a few counters, sits behind a lock.
final class DiskTier: Sendable {
    /// The cache folder.
    let folder: URL
    /// The most bytes of entry files kept; sweeps trim to 90% of it.
    let sizeLimit: Int
    /// The time writes and reads give a file, the order the sweep evicts in.
    let clock: CacheClock

    private let folderPath: String
    private let writerTag = "\(getpid())-\(UInt32.random(in: .min ... .max))"
    private let sweepLock = NSLock()
    private let changes = DispatchQueue(label: "Convey.DataCache.disk-changes", qos: .utility)
    private let state = InlineLocked(State())

    private struct State {
        var approximateSize = 0
        var sweepScheduled = false
        var temporaryCounter = 0
        var counts = DiskCounts()
    }

    /// What the tier has done since it was created.
    struct DiskCounts: Sendable {
        var hits = 0
        var writes = 0
        var writeFailures = 0
        var droppedEntries = 0
        /// Reads that found an entry's data protected and unavailable (a locked device): misses, the file kept.
        var unavailableReads = 0
        var sweeps = 0
        var evictedFiles = 0
    }

    /// Temporary files older than this are leftovers of a crashed writer.
    private static let abandonedTemporaryAge: TimeInterval = 600
    private static let temporaryPrefix = ".tmp-"

    /// Opens (creating if needed) the folder and starts a background sweep that measures it.
    init(folder: URL, sizeLimit: Int, clock: CacheClock) throws {
        self.folder = folder
        self.sizeLimit = max(0, sizeLimit)
        self.clock = clock
        folderPath = folder.standardizedFileURL.path
        do throws(FileFailure) {
            try OwnerOnlyFiles.createFolder(atPath: folderPath)
        } catch {
            throw ConveyError.cacheFolderUnavailable(folder: folder, reason: error.description)
        }
        guard access(folderPath, W_OK) == 0 else {
            throw ConveyError.cacheFolderUnavailable(folder: folder, reason: "the folder is not writable")
        }
        state.withLock { $0.sweepScheduled = true }
        sweepInBackground()
    }

    var counts: DiskCounts { state.withLock { $0.counts } }

    // MARK: Ordering changes

    /// Runs `change` after every change queued before it, and waits for it.
    func perform(_ change: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            changes.async {
                change()
                continuation.resume()
            }
        }
    }

    /// Queues `change` after every change queued before it, without waiting.
    func enqueue(_ change: @escaping @Sendable () -> Void) {
        changes.async(execute: change)
    }

    // MARK: Entries

    /// The sound entry stored for `key`, or `nil`. A corrupt file, or anything but a regular file
    /// in an entry's place (a link, a FIFO), is deleted; a file holding a colliding key is left
    /// for its owner. A file whose data is protected and unavailable for now (a locked device:
    /// `ProtectedData`) is a miss and is kept. A hit refreshes the file's time for eviction.
    func read(key: String) -> CachedResponse? {
        let path = self.path(for: key)
        let decoded: CacheEntryFormat.Decoded
        do throws(FileFailure) {
            guard let file = try OwnerOnlyFiles.openForReading(atPath: path) else { return nil }
            defer { close(file.descriptor) }
            let bytes = try OwnerOnlyFiles.readAll(file, limit: sizeLimit, path: path)
            _ = futimens(file.descriptor, Self.fileTimes(clock.now()))
            decoded = bytes.withUnsafeBytes { CacheEntryFormat.decode($0, expectedKey: key) }
        } catch where ProtectedData.isUnavailable(error) {
            state.withLock { $0.counts.unavailableReads += 1 }
            return nil
        } catch {
            decoded = .corrupt(error.description)
        }
        switch decoded {
        case .entry(let entry):
            state.withLock { $0.counts.hits += 1 }
            return entry
        case .otherKey:
            return nil
        case .corrupt:
            unlink(path)
            state.withLock { $0.counts.droppedEntries += 1 }
            return nil
        }
    }

    /// Writes `entry` atomically, on the calling thread; `false` when it could not be written or
    /// exceeds the size limit. Call it through `perform` or `enqueue` to keep changes in order.
    @discardableResult
    func write(_ entry: CachedResponse) -> Bool {
        let bytes = CacheEntryFormat.encode(entry)
        guard bytes.count <= sizeLimit else { return false }
        let written = writeAtomically(bytes, to: path(for: entry.key))
        let sweepNeeded: Bool = state.withLock { state in
            if written {
                state.counts.writes += 1
                state.approximateSize = Self.runningSize(state.approximateSize, adding: bytes.count)
            } else {
                state.counts.writeFailures += 1
            }
            guard state.approximateSize > sizeLimit, !state.sweepScheduled else { return false }
            state.sweepScheduled = true
            return true
        }
        if sweepNeeded { sweepInBackground() }
        return written
    }

    /// Deletes the file for `key`, if there is one.
    func remove(key: String) {
        unlink(path(for: key))
    }

    /// Sets the file's time for `key` to the clock's now, so the sweep sees it as recently used.
    func touch(key: String) {
        let times = Self.fileTimes(clock.now())
        _ = utimensat(AT_FDCWD, path(for: key), times, AT_SYMLINK_NOFOLLOW)
    }

    /// Access and modification times of `date` for `futimens` and `utimensat`.
    private static func fileTimes(_ date: Date) -> [timespec] {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        // `time_t` has 32 bits on watchOS: a date past 2038 is clamped, not a trap.
        let time = timespec(tv_sec: time_t(clamping: Int64(seconds)), tv_nsec: Int((date.timeIntervalSince1970 - seconds) * 1e9))
        return [time, time]
    }

    /// Deletes every entry file, keeping the folder (another process may be using it).
    func removeAll() {
        forEachFile { path, _, _, _ in unlink(path) }
        state.withLock { $0.approximateSize = 0 }
    }

    /// Calls `change` with every sound entry; a returned entry replaces the stored one.
    func rewriteEntries(_ change: (CachedResponse) -> CachedResponse?) {
        var paths: [String] = []
        forEachFile { path, _, _, isTemporary in if !isTemporary { paths.append(path) } }
        for path in paths {
            guard let bytes = try? OwnerOnlyFiles.read(atPath: path, limit: sizeLimit),
                  case .entry(let entry) = bytes.withUnsafeBytes({ CacheEntryFormat.decode($0, expectedKey: nil) }),
                  let replacement = change(entry)
            else { continue }
            write(replacement)
        }
    }

    // MARK: Sweeping

    /// Sweeps on a utility dispatch queue: a sweep blocks on the file system for a while (about
    /// 0.2 s per 100k files) and must not hold one of Swift concurrency's few cooperative threads.
    private func sweepInBackground() {
        DispatchQueue.global(qos: .utility).async { [self] in sweep() }
    }

    /// Sweeps now, off the cooperative threads, and returns when done.
    func sweepNow() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global(qos: .utility).async { [self] in
                sweep()
                continuation.resume()
            }
        }
    }

    /// Measures the folder, deletes abandoned temporary files and, when the entries exceed the
    /// size limit, deletes the least recently used down to 90% of it. Runs one at a time.
    func sweep() {
        sweepLock.withLock {
            state.withLock { $0.sweepScheduled = false }
            // Leftover temporary files carry the file system's own time, not the clock's.
            let now = Date().timeIntervalSince1970
            var files: [(path: String, size: Int64, modified: Double)] = []
            var total: Int64 = 0
            forEachFile { path, size, modified, isTemporary in
                if isTemporary {
                    if now - modified > Self.abandonedTemporaryAge { unlink(path) }
                    return
                }
                files.append((path, size, modified))
                total += size
            }
            var evicted = 0
            if total > Int64(sizeLimit) {
                let target = Int64(sizeLimit / 10 * 9)
                files.sort { $0.modified < $1.modified }
                for file in files where total > target {
                    if unlink(file.path) == 0 || errno == ENOENT {
                        total -= file.size
                        evicted += 1
                    }
                }
            }
            state.withLock { state in
                state.approximateSize = Int(clamping: total)
                state.counts.sweeps += 1
                state.counts.evictedFiles += evicted
            }
        }
    }

    /// The bytes the entry files took at the last sweep plus what was written since.
    var approximateSize: Int { state.withLock { $0.approximateSize } }

    /// `size` plus `written`, held at `Int.max` instead of overflowing: with a size limit near
    /// `Int.max` (2 GiB on watchOS, whose `Int` has 32 bits) the writes made before the next sweep
    /// measures the folder could add up past it, and an overflow traps.
    static func runningSize(_ size: Int, adding written: Int) -> Int {
        let (sum, overflow) = size.addingReportingOverflow(written)
        return overflow ? .max : sum
    }

    // MARK: Files

    /// `folder/ab/abcdef…` for a key whose SHA-256 starts with `ab`.
    func path(for key: String) -> String {
        Self.path(forKey: key, inFolder: folderPath)
    }

    /// The path of the file for `key` in the cache folder at `folderPath`.
    static func path(forKey key: String, inFolder folderPath: String) -> String {
        let name = SHA256.hexDigest(key)
        return folderPath + "/" + name.prefix(2) + "/" + name
    }

    private func writeAtomically(_ bytes: [UInt8], to path: String) -> Bool {
        let shard = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        let counter = state.withLock { state in
            state.temporaryCounter += 1
            return state.temporaryCounter
        }
        let temporary = shard + "/" + Self.temporaryPrefix + writerTag + "-\(counter)"
        var info = stat()
        if lstat(shard, &info) != 0 {
            guard errno == ENOENT, mkdir(shard, OwnerOnlyFiles.folderMode) == 0 || errno == EEXIST else { return false }
        } else if (info.st_mode & S_IFMT) != S_IFDIR {
            // A link (or anything else) planted in a shard's place: never written through.
            return false
        }
        let times = Self.fileTimes(clock.now())
        return bytes.withUnsafeBytes { buffer in
            (try? OwnerOnlyFiles.replace(atPath: path, temporaryPath: temporary, with: buffer) { _ = futimens($0, times) }) != nil
        }
    }

    /// Calls `body` with the path, size, modification time and temporariness of every file in the
    /// shard folders. Sizes are `Int64`: files of 2 GiB or more in the folder must not overflow a 32-bit `Int` (watchOS).
    private func forEachFile(_ body: (String, Int64, Double, Bool) -> Void) {
        let digits = Array("0123456789abcdef")
        for high in digits {
            for low in digits {
                let shard = folderPath + "/" + String(high) + String(low)
                // Never through a link in a shard's place: the sweep would delete files elsewhere.
                let shardDescriptor = open(shard, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard shardDescriptor >= 0 else { continue }
                guard let directory = fdopendir(shardDescriptor) else {
                    close(shardDescriptor)
                    continue
                }
                defer { closedir(directory) }
                let directoryDescriptor = dirfd(directory)
                while let item = readdir(directory) {
                    let name = withUnsafeBytes(of: item.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                    guard name != ".", name != ".." else { continue }
                    var info = stat()
                    guard fstatat(directoryDescriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
                    body(shard + "/" + name, Int64(info.st_size), Self.modificationTime(info), name.hasPrefix(Self.temporaryPrefix))
                }
            }
        }
    }

    private static func modificationTime(_ info: stat) -> Double {
        #if canImport(Darwin)
        Double(info.st_mtimespec.tv_sec) + Double(info.st_mtimespec.tv_nsec) / 1e9
        #else
        Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        #endif
    }
}
