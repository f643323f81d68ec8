import Foundation

/// An HTTP cache for Convey tasks and for any URL's bytes: a memory tier, optionally backed by a
/// disk folder that survives restarts and may be shared by several processes.
///
/// Set one on a server and every GET and HEAD task uses it as its `cacheStrategy` says:
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.cache = try DataCache(folder: cachesFolder.appending(path: "api"))
/// let server = ConveyServer(remote: .production, configuration: configuration, asDefault: true)
/// ```
///
/// - Memory tier: least recently used out first once the entries' total cost (about their size
///   in bytes) passes `memoryCostLimit`.
/// - Disk tier: one self-verifying file per entry, written atomically; a background sweep
///   deletes the least recently used files once they pass `diskSizeLimit`. A corrupt,
///   truncated or colliding file is never served: it is dropped and the response fetched again.
public actor DataCache {
    /// The default memory cost limit: 32 MiB.
    public static let defaultMemoryCostLimit = 32 << 20
    /// The default disk size limit: 256 MiB.
    public static let defaultDiskSizeLimit = 256 << 20
    /// How stale a disk file's time may get while its entry is being served from memory.
    private static let diskTouchInterval: TimeInterval = 60

    /// The disk folder, or `nil` for a memory-only cache.
    public nonisolated var folder: URL? { disk?.folder }
    /// The most bytes the memory tier keeps; an entry bigger than this is kept on disk only.
    public nonisolated let memoryCostLimit: Int
    /// The most bytes of entry files the disk tier keeps, or `nil` for a memory-only cache.
    public nonisolated var diskSizeLimit: Int? { disk?.sizeLimit }

    private var memory: MemoryTier
    private nonisolated let disk: DiskTier?
    private var memoryHits = 0
    private var misses = 0

    /// A memory-only cache: nothing survives the process.
    public init(memoryCostLimit: Int = DataCache.defaultMemoryCostLimit) {
        self.memoryCostLimit = memoryCostLimit
        memory = MemoryTier(costLimit: memoryCostLimit)
        disk = nil
    }

    /// A cache backed by `folder`, created if needed. Several processes may share the folder.
    ///
    /// Throws `ConveyError.cache` of kind `.folderUnavailable` when the folder cannot be created or written.
    public init(folder: URL, diskSizeLimit: Int = DataCache.defaultDiskSizeLimit,
                memoryCostLimit: Int = DataCache.defaultMemoryCostLimit) throws {
        self.memoryCostLimit = memoryCostLimit
        memory = MemoryTier(costLimit: memoryCostLimit)
        disk = try DiskTier(folder: folder, sizeLimit: diskSizeLimit)
    }

    /// Reads and clears the validators (`ETag`, `Last-Modified`) of stored responses.
    public nonisolated var eTags: ETagStore { ETagStore(cache: self) }

    // MARK: Reading and writing

    /// The stored response for a `method` request to `url`, whatever its age and `Vary`, or `nil`.
    public nonisolated func response(for url: URL, method: HTTPMethod = .get) async -> CachedResponse? {
        await entry(forKey: CacheKey.key(for: url, method: method))
    }

    /// Stores `response` under its key, replacing what was there, in memory and on disk; returns
    /// once the disk file is written.
    public nonisolated func store(_ response: CachedResponse) async {
        await keepInMemory(response, replacing: true)
        guard let disk else { return }
        await disk.perform { disk.write(response) }
    }

    /// Waits until every disk write queued so far (by task runs, which do not wait for the disk) is done.
    public nonisolated func flush() async {
        await disk?.perform {}
    }

    /// Removes the stored responses (GET and HEAD) for `url`.
    public nonisolated func removeResponse(for url: URL) async {
        for method in [HTTPMethod.get, .head] { await remove(key: CacheKey.key(for: url, method: method)) }
    }

    /// Removes every stored response, in memory and on disk.
    public nonisolated func removeAll() async {
        await clearMemory()
        guard let disk else { return }
        await disk.perform { disk.removeAll() }
    }

    /// Trims the disk tier now instead of waiting for the background sweep: measures the folder,
    /// removes abandoned temporary files and, over the limit, the least recently used entries.
    public nonisolated func trimDisk() async {
        await flush()
        await disk?.sweepNow()
    }

    /// Counts of what the cache has done, for monitoring and benchmarks.
    public var statistics: CacheStatistics {
        let diskCounts = disk?.counts ?? DiskTier.DiskCounts()
        return CacheStatistics(
            memoryHits: memoryHits, diskHits: diskCounts.hits, misses: misses, memoryEntryCount: memory.count,
            memoryCost: memory.totalCost, diskSize: disk?.approximateSize ?? 0, diskWrites: diskCounts.writes,
            diskWriteFailures: diskCounts.writeFailures, droppedDiskEntries: diskCounts.droppedEntries,
            diskSweeps: diskCounts.sweeps, evictedDiskFiles: diskCounts.evictedFiles)
    }

    // MARK: Internals

    /// The entry for `key`: from memory, else from disk (off the actor, then kept in memory).
    nonisolated func entry(forKey key: String) async -> CachedResponse? {
        if let hit = await memoryEntry(forKey: key) { return hit }
        guard let found = disk?.read(key: key) else {
            await countMiss()
            return nil
        }
        await keepInMemory(found, replacing: false)
        return found
    }

    /// Keeps `response` in memory now and queues its disk write without waiting, so a task's
    /// answer is never held up by the disk; later changes to the same key are queued after it.
    nonisolated func storeInBackground(_ response: CachedResponse) async {
        await keepInMemory(response, replacing: true)
        guard let disk else { return }
        disk.enqueue { disk.write(response) }
    }

    /// Removes the entry for `key` from both tiers, after any queued write of it.
    nonisolated func remove(key: String) async {
        await forgetInMemory(key)
        guard let disk else { return }
        await disk.perform { disk.remove(key: key) }
    }

    /// Replaces every stored entry that `change` returns a replacement for, in both tiers.
    nonisolated func rewriteAll(_ change: @escaping @Sendable (CachedResponse) -> CachedResponse?) async {
        await rewriteMemory(change)
        guard let disk else { return }
        await disk.perform { disk.rewriteEntries(change) }
    }

    private func memoryEntry(forKey key: String) -> CachedResponse? {
        guard let found = memory.entry(for: key) else { return nil }
        memoryHits += 1
        if let disk {
            let now = Date()
            if now.timeIntervalSince(found.diskTouchedAt) > Self.diskTouchInterval {
                disk.touch(key: key)
                memory.noteDiskTouch(for: key, at: now)
            }
        }
        return found.entry
    }

    private func keepInMemory(_ entry: CachedResponse, replacing: Bool) {
        if replacing || memory.entry(for: entry.key) == nil { memory.insert(entry) }
    }

    private func forgetInMemory(_ key: String) { memory.remove(key) }

    private func clearMemory() { memory.removeAll() }

    private func countMiss() { misses += 1 }

    private func rewriteMemory(_ change: (CachedResponse) -> CachedResponse?) {
        for entry in memory.entries.reversed() {
            if let replacement = change(entry) { memory.insert(replacement) }
        }
    }
}

/// What a `DataCache` has done since it was created.
public struct CacheStatistics: Sendable, Hashable {
    /// Lookups answered from memory.
    public var memoryHits: Int
    /// Lookups answered from disk.
    public var diskHits: Int
    /// Lookups that found nothing.
    public var misses: Int
    /// Entries in memory now.
    public var memoryEntryCount: Int
    /// The memory tier's total cost now, about its size in bytes.
    public var memoryCost: Int
    /// The disk tier's size in bytes at its last sweep plus what was written since.
    public var diskSize: Int
    /// Entry files written.
    public var diskWrites: Int
    /// Entry files that could not be written (full disk, permissions).
    public var diskWriteFailures: Int
    /// Corrupt or truncated entry files found and deleted.
    public var droppedDiskEntries: Int
    /// Disk sweeps run.
    public var diskSweeps: Int
    /// Entry files deleted by sweeps to stay under the size limit.
    public var evictedDiskFiles: Int
}
