import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Memory tier")
struct MemoryTierTests {
    private func entry(_ key: String, bytes: Int = 1000) -> CachedResponse {
        CachedResponse(key: key, statusCode: 200, fields: [:], body: Data(count: bytes), requestedAt: Date(), receivedAt: Date(),
                       varyingRequestHeaders: [], credentialPartition: nil)
    }

    @Test func theLeastRecentlyUsedEntryLeavesFirstWhenTheCostLimitIsPassed() {
        let cost = entry("a").cost
        var tier = MemoryTier(costLimit: cost * 3)
        tier.insert(entry("a"))
        tier.insert(entry("b"))
        tier.insert(entry("c"))
        #expect(tier.entry(for: "a") != nil)
        tier.insert(entry("d"))
        #expect(tier.entry(for: "b") == nil)
        #expect(tier.entry(for: "a") != nil)
        #expect(tier.entry(for: "c") != nil)
        #expect(tier.entry(for: "d") != nil)
        #expect(tier.count == 3)
        #expect(tier.totalCost == cost * 3)
        #expect(tier.entries.map(\.key) == ["d", "c", "a"])
    }

    @Test func replacingAnEntryKeepsOneCopyAndItsNewCost() {
        var tier = MemoryTier(costLimit: 1 << 20)
        tier.insert(entry("a", bytes: 100))
        tier.insert(entry("a", bytes: 5000))
        #expect(tier.count == 1)
        #expect(tier.totalCost == entry("a", bytes: 5000).cost)
        #expect(tier.entry(for: "a")?.entry.body.count == 5000)
    }

    @Test func anEntryBiggerThanTheLimitIsNotKept() {
        var tier = MemoryTier(costLimit: 2000)
        tier.insert(entry("small", bytes: 10))
        tier.insert(entry("huge", bytes: 10_000))
        #expect(tier.entry(for: "huge") == nil)
        #expect(tier.entry(for: "small") != nil)
    }

    @Test func removedSlotsAreReusedAndTheListStaysConsistent() {
        var tier = MemoryTier(costLimit: 1 << 30)
        for round in 0..<3 {
            for index in 0..<1000 { tier.insert(entry("k\(index)", bytes: 10)) }
            for index in stride(from: 0, to: 1000, by: 2) { tier.remove("k\(index)") }
            #expect(tier.count == 500, "round \(round)")
            #expect(tier.entries.count == 500)
            for index in stride(from: 1, to: 1000, by: 2) { tier.remove("k\(index)") }
            #expect(tier.count == 0)
            #expect(tier.totalCost == 0)
        }
    }
}
