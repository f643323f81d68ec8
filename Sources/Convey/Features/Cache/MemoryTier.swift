import Foundation

/// The memory tier: entries by key, least recently used first out once their total cost passes
/// the limit. Every operation is O(1): a dictionary finds a slot, and the slots form a doubly
/// linked recency list through indices (no per-node objects, so no reference counting).
struct MemoryTier {
    /// The most total cost kept; an entry costing more than this is not kept at all.
    let costLimit: Int
    /// The sum of the kept entries' costs.
    private(set) var totalCost = 0

    private struct Slot {
        var key: String
        var entry: CachedResponse?
        var cost: Int
        var newer: Int
        var older: Int
        /// When the entry's disk file last had its time touched, so disk eviction sees memory hits too.
        var diskTouchedAt: Date
    }

    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    private var slotByKey: [String: Int] = [:]
    private var newest = -1
    private var oldest = -1

    init(costLimit: Int) { self.costLimit = max(0, costLimit) }

    /// The number of entries kept.
    var count: Int { slotByKey.count }

    /// The entry for `key`, now the most recently used, and when its disk file was last touched.
    mutating func entry(for key: String) -> (entry: CachedResponse, diskTouchedAt: Date)? {
        guard let index = slotByKey[key], let entry = slots[index].entry else { return nil }
        moveToNewest(index)
        return (entry, slots[index].diskTouchedAt)
    }

    /// Notes that the entry's disk file was touched at `date`.
    mutating func noteDiskTouch(for key: String, at date: Date) {
        if let index = slotByKey[key] { slots[index].diskTouchedAt = date }
    }

    /// Keeps `entry` as the most recently used, replacing one with the same key, then evicts the
    /// least recently used until the total cost fits the limit.
    mutating func insert(_ entry: CachedResponse, diskTouchedAt: Date = Date()) {
        remove(entry.key)
        let cost = entry.cost
        guard cost <= costLimit else { return }
        let slot = Slot(key: entry.key, entry: entry, cost: cost, newer: -1, older: newest, diskTouchedAt: diskTouchedAt)
        let index: Int
        if let reused = freeSlots.popLast() {
            index = reused
            slots[index] = slot
        } else {
            index = slots.count
            slots.append(slot)
        }
        if newest >= 0 { slots[newest].newer = index }
        newest = index
        if oldest < 0 { oldest = index }
        slotByKey[entry.key] = index
        totalCost += cost
        while totalCost > costLimit, oldest >= 0 { remove(slots[oldest].key) }
    }

    /// Forgets the entry for `key`, if kept.
    mutating func remove(_ key: String) {
        guard let index = slotByKey.removeValue(forKey: key) else { return }
        unlink(index)
        totalCost -= slots[index].cost
        slots[index].entry = nil
        slots[index].key = ""
        freeSlots.append(index)
    }

    /// Forgets every entry.
    mutating func removeAll() {
        slots.removeAll()
        freeSlots.removeAll()
        slotByKey.removeAll()
        newest = -1
        oldest = -1
        totalCost = 0
    }

    /// Every kept entry, most recently used first.
    var entries: [CachedResponse] {
        var result: [CachedResponse] = []
        var index = newest
        while index >= 0 {
            if let entry = slots[index].entry { result.append(entry) }
            index = slots[index].older
        }
        return result
    }

    private mutating func moveToNewest(_ index: Int) {
        guard index != newest else { return }
        unlink(index)
        slots[index].older = newest
        slots[index].newer = -1
        if newest >= 0 { slots[newest].newer = index }
        newest = index
        if oldest < 0 { oldest = index }
    }

    private mutating func unlink(_ index: Int) {
        let newer = slots[index].newer, older = slots[index].older
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        slots[index].newer = -1
        slots[index].older = -1
    }
}
