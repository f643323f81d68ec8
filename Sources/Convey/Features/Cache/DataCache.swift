import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
/// - `Vary`: up to `maximumVariantsPerURL` variants per URL, least recently used out.
/// - Time: every freshness judgement reads the system clock (an internal `CacheClock`, which
///   tests move instead of waiting).
/// - Users stay apart: a response stored for a request with credentials (`Authorization`,
///   `Cookie`, API keys, URL user info: see `CredentialPartition`) answers only requests with the
///   same credentials, and never a request without them; credentials are kept only as keyed hashes.
public actor DataCache {
    /// How many `Vary` variants of one URL are kept; the least recently used goes first.
    public static let maximumVariantsPerURL = 4
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
    /// The time freshness is judged at and entries are stamped with. Default: `.system`.
    nonisolated let clock: CacheClock

    /// Shares identical GET and HEAD exchanges in flight among the tasks using this cache.
    nonisolated let coalescer = RequestCoalescer()
    /// The secret that names credential partitions: per instance in memory, in the folder on disk.
    nonisolated var partitionKey: [UInt8] { partitionKeys.current }
    private nonisolated let partitionKeys: PartitionKeys

    private var memory: MemoryTier
    private nonisolated let disk: DiskTier?
    private var memoryHits = 0
    private var misses = 0
    /// Per key, the keys of its older `Vary` variants, most recently used first (this process only;
    /// after a restart variants are found through the request values instead).
    private var variantKeys: [String: [String]] = [:]
    /// Per anonymous key, the credential partitions stored for it in this process (up to
    /// `maximumRememberedPartitions`), so that removing a URL's responses reaches every user's.
    private var partitionedKeys: [String: Set<String>] = [:]
    /// How many partitions of one URL are remembered for removal: a bound on memory in a backend
    /// serving many users. Past it, older users' entries of that URL wait for their own expiry.
    static let maximumRememberedPartitions = 1000

    /// A memory-only cache: nothing survives the process.
    public init(memoryCostLimit: Int = DataCache.defaultMemoryCostLimit) {
        self.init(memoryCostLimit: memoryCostLimit, clock: .system)
    }

    /// A memory-only cache judging time by `clock` (tests move it instead of waiting).
    init(memoryCostLimit: Int = DataCache.defaultMemoryCostLimit, clock: CacheClock) {
        self.memoryCostLimit = memoryCostLimit
        self.clock = clock
        memory = MemoryTier(costLimit: memoryCostLimit)
        disk = nil
        partitionKeys = PartitionKeys()
    }

    /// A cache backed by `folder`, created if needed. Several processes may share the folder.
    ///
    /// What a crash or a disk error damaged is dropped and rebuilt, never a reason to fail: a
    /// corrupt entry file is a miss, and a missing or damaged `partition-key` file gets a new key,
    /// which turns the entries stored for requests with credentials into misses.
    ///
    /// Files whose data is protected and unavailable for now (iOS: a locked device, or before the
    /// first unlock; they fail with `EPERM` or `EACCES`) are not damage: the cache opens, serves
    /// misses for them and deletes nothing, and reads them again once the data is available.
    ///
    /// Throws `ConveyError.cacheFolderUnavailable` when the folder cannot be created or
    /// written, or when its `partition-key` is a link, not a regular file, another user's, or open
    /// to other users: a file someone else put there is refused, not trusted or replaced.
    public init(folder: URL, diskSizeLimit: Int = DataCache.defaultDiskSizeLimit,
                memoryCostLimit: Int = DataCache.defaultMemoryCostLimit) throws {
        try self.init(folder: folder, diskSizeLimit: diskSizeLimit, memoryCostLimit: memoryCostLimit, clock: .system)
    }

    /// A cache backed by `folder`, judging time by `clock` (tests move it instead of waiting).
    init(folder: URL, diskSizeLimit: Int = DataCache.defaultDiskSizeLimit,
         memoryCostLimit: Int = DataCache.defaultMemoryCostLimit, clock: CacheClock) throws {
        self.memoryCostLimit = memoryCostLimit
        self.clock = clock
        memory = MemoryTier(costLimit: memoryCostLimit)
        disk = try DiskTier(folder: folder, sizeLimit: diskSizeLimit, clock: clock)
        partitionKeys = try PartitionKeys(folder: folder)
    }

    // MARK: Reading and writing

    /// The stored response for a `method` request without credentials to `url`, whatever its age
    /// and `Vary`, or `nil`: for Convey's tools (`@_spi(Tools)`). An app reads a stored response
    /// as a task would get it, with `data(from:strategy: .localOnly)`.
    @_spi(Tools) public nonisolated func response(for url: URL, method: HTTPMethod = .get) async -> CachedResponse? {
        await entry(forKey: CacheKey.key(for: url, method: method))
    }

    /// Stores a response for a GET of `url`, replacing what was there, in memory and on disk, as
    /// if it had come from the server at `receivedAt`: for seeding a cache by hand (responses an
    /// app ships to work offline, say); tasks store responses themselves. `Cache-Control`,
    /// `Expires`, `ETag` and the like in `headers` apply as usual. Returns once the disk file is written.
    ///
    /// ```swift
    /// await cache.store(bundledFeed, for: feedURL, headers: ["Cache-Control": "max-age=3600"])
    /// ```
    public nonisolated func store(_ body: Data, for url: URL, statusCode: Int = 200, headers: Headers = Headers(),
                                  receivedAt: Date = Date()) async {
        await store(CachedResponse(url: url, statusCode: statusCode, fields: headers, body: body, receivedAt: receivedAt))
    }

    /// Stores `response` under its key, replacing what was there, in memory and on disk; returns
    /// once the disk file is written. For Convey's tools (`@_spi(Tools)`).
    @_spi(Tools) public nonisolated func store(_ response: CachedResponse) async {
        await keepInMemory(response, replacing: true)
        guard let disk else { return }
        await disk.perform { disk.write(response) }
    }

    /// Waits until every disk write queued so far (by task runs, which do not wait for the disk) is done.
    public nonisolated func flush() async {
        await disk?.perform {}
    }

    /// Removes the stored responses (GET and HEAD, every `Vary` variant) for `url`: those without
    /// credentials and those of every set of credentials stored in this process.
    public nonisolated func removeResponse(for url: URL) async {
        await removeResponses(for: url, in: .anonymous)
    }

    /// Removes the stored responses for `url` without credentials, in `partition`, and in every
    /// partition stored for it in this process (another process's partitions are out of its reach).
    nonisolated func removeResponses(for url: URL, in partition: CredentialPartition) async {
        for method in [HTTPMethod.get, .head] {
            let anonymous = CacheKey.key(for: url, method: method)
            var keys = await forgetPartitions(of: anonymous)
            keys.insert(anonymous)
            keys.insert(CacheKey.key(for: url, method: method, partition: partition))
            for key in keys { await removeWithVariants(key: key) }
        }
    }

    /// The credential partition `request` belongs to, with `credentials` naming credential headers
    /// beyond the standard ones.
    nonisolated func partition(of request: OutgoingRequest, credentials: Redaction) -> CredentialPartition {
        CredentialPartition(of: request, credentials: credentials, key: partitionKey)
    }

    /// Removes every stored response, in memory and on disk.
    public nonisolated func removeAll() async {
        await clearMemory()
        await forgetVariants(of: nil)
        await forgetAllPartitions()
        guard let disk else { return }
        await disk.perform { disk.removeAll() }
    }

    /// Trims the disk tier now instead of waiting for the background sweep: measures the folder,
    /// removes abandoned temporary files and, over the limit, the least recently used entries.
    public nonisolated func trimDisk() async {
        await flush()
        await disk?.sweepNow()
    }

    /// Counts of what the cache has done, for Convey's benchmarks and tests (`@_spi(Tools)`).
    @_spi(Tools) public var statistics: CacheStatistics {
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

    /// The stored response for `key` that answers `request` in `partition`: the newest variant
    /// when it matches, else the variant stored for the request's `Vary` values (RFC 9111 §4.1), or `nil`.
    nonisolated func matchingEntry(forKey key: String, request: OutgoingRequest, in partition: CredentialPartition) async -> CachedResponse? {
        let primary = await entry(forKey: key)
        if let primary, HTTPCacheRules.mismatch(of: primary, with: request, in: partition) == nil { return primary }
        var candidates = await variantKeys(of: key)
        if let primary, !primary.varyingRequestHeaders.isEmpty, HTTPCacheRules.isStored(primary, for: partition) {
            let computed = CacheKey.variantKey(key, HTTPCacheRules.requestVariant(of: primary, for: request))
            if !candidates.contains(computed) { candidates.append(computed) }
        }
        for candidate in candidates {
            guard let variant = await entry(forKey: candidate), HTTPCacheRules.mismatch(of: variant, with: request, in: partition) == nil
            else { continue }
            await noteVariantUse(candidate, of: key)
            return variant
        }
        return nil
    }

    /// Stores `response` as the newest variant of its key, in memory now and on disk in the
    /// background. The variant it displaces (other `Vary` values) moves to its own key, and past
    /// `maximumVariantsPerURL` the least recently used variant is removed.
    nonisolated func storeVariantInBackground(_ response: CachedResponse) async {
        let key = Self.baseKey(of: response.key)
        await notePartition(of: key)
        let newest = response.key == key ? response : response.replacing(key: key)
        guard !newest.varyingRequestHeaders.isEmpty else {
            await removeVariants(of: key)
            await storeInBackground(newest)
            return
        }
        let newestVariantKey = CacheKey.variantKey(key, newest.varyingRequestHeaders)
        if let displaced = await entry(forKey: key), !displaced.varyingRequestHeaders.isEmpty {
            let displacedKey = CacheKey.variantKey(key, displaced.varyingRequestHeaders)
            if displacedKey != newestVariantKey {
                await storeInBackground(displaced.replacing(key: displacedKey))
                await noteVariantUse(displacedKey, of: key)
            }
        }
        await storeInBackground(newest)
        await forgetInMemory(newestVariantKey)
        disk?.enqueue { [disk] in disk?.remove(key: newestVariantKey) }
        for evicted in await dropVariant(newestVariantKey, of: key) { await remove(key: evicted) }
    }

    /// Removes `key` and every variant of it.
    nonisolated func removeWithVariants(key: String) async {
        await removeVariants(of: key)
        await remove(key: key)
    }

    /// The key without a variant's request values.
    static func baseKey(of key: String) -> String {
        key.firstIndex(of: CacheKey.variantSeparator).map { String(key[..<$0]) } ?? key
    }

    private nonisolated func removeVariants(of key: String) async {
        for variant in await forgetVariants(of: key) { await remove(key: variant) }
    }

    private func variantKeys(of key: String) -> [String] { variantKeys[key] ?? [] }

    /// Remembers a partitioned `key` under its anonymous key, for `removeResponses(for:in:)`.
    private func notePartition(of key: String) {
        guard let separator = key.firstIndex(of: CacheKey.partitionSeparator) else { return }
        let anonymous = String(key[..<separator])
        guard partitionedKeys[anonymous, default: []].count < Self.maximumRememberedPartitions else { return }
        partitionedKeys[anonymous, default: []].insert(key)
    }

    /// Forgets the partitions remembered for the anonymous `key` and returns their keys.
    private func forgetPartitions(of key: String) -> Set<String> {
        partitionedKeys.removeValue(forKey: key) ?? []
    }

    private func forgetAllPartitions() { partitionedKeys.removeAll() }

    /// Marks `variant` the most recently used variant of `key`.
    private func noteVariantUse(_ variant: String, of key: String) {
        var keys = variantKeys[key] ?? []
        keys.removeAll { $0 == variant }
        keys.insert(variant, at: 0)
        variantKeys[key] = keys
    }

    /// Forgets `variant` (now stored as the newest under `key` itself) and returns the older
    /// variants beyond the bound, which the caller removes.
    private func dropVariant(_ variant: String, of key: String) -> [String] {
        var keys = variantKeys[key] ?? []
        keys.removeAll { $0 == variant }
        let kept = Self.maximumVariantsPerURL - 1
        let evicted = keys.count > kept ? Array(keys[kept...]) : []
        keys = Array(keys.prefix(kept))
        variantKeys[key] = keys.isEmpty ? nil : keys
        return evicted
    }

    /// Forgets the variants of `key` (of every key when `nil`) and returns their keys.
    @discardableResult
    private func forgetVariants(of key: String?) -> [String] {
        guard let key else {
            variantKeys.removeAll()
            return []
        }
        return variantKeys.removeValue(forKey: key) ?? []
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
            let now = clock.now()
            if now.timeIntervalSince(found.diskTouchedAt) > Self.diskTouchInterval {
                disk.touch(key: key)
                memory.noteDiskTouch(for: key, at: now)
            }
        }
        return found.entry
    }

    private func keepInMemory(_ entry: CachedResponse, replacing: Bool) {
        if replacing || memory.entry(for: entry.key) == nil { memory.insert(entry, diskTouchedAt: clock.now()) }
    }

    private func forgetInMemory(_ key: String) { memory.remove(key) }

    private func clearMemory() { memory.removeAll() }

    private func countMiss() { misses += 1 }

    private func rewriteMemory(_ change: (CachedResponse) -> CachedResponse?) {
        for entry in memory.entries.reversed() {
            if let replacement = change(entry) { memory.insert(replacement, diskTouchedAt: clock.now()) }
        }
    }
}

/// What a `DataCache` has done since it was created: Convey's SPI for its tools.
@_spi(Tools) public struct CacheStatistics: Sendable, Hashable {
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
