import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Damaged and hostile files in the folder are set aside with a reason; the other items go on.
@Suite("Outbox: damaged files")
@ConveyActor
struct OutboxDamageTests {
    let scratch = OutboxScratch()
    let clock = ManualOutboxClock()

    /// Enqueues `count` items, breaks the files `damage` picks, then delivers with a fresh outbox.
    func deliverAfterDamage(count: Int = 3, _ damage: (URL, [OutboxItem]) throws -> Void) async throws -> (outbox: Outbox, answers: ScriptedAnswers, items: [OutboxItem]) {
        let answers = ScriptedAnswers([.status(200)])
        let server = try outboxServer(answers)
        let first = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        var items: [OutboxItem] = []
        for index in 0..<count { items.append(try await first.enqueue(PlaceOrder(server: server, item: "\(index)"))) }
        try damage(scratch.folder, items)
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        try await outbox.deliverPending()
        return (outbox, answers, items)
    }

    func file(_ folder: URL, _ item: OutboxItem, _ suffix: String = ".item") -> URL { folder.appending(path: item.id + suffix) }

    @Test func aTruncatedItemIsSetAsideAndTheOthersAreDelivered() async throws {
        defer { scratch.remove() }
        let run = try await deliverAfterDamage { folder, items in
            let url = file(folder, items[1])
            let bytes = try Data(contentsOf: url)
            try bytes.prefix(bytes.count - 3).write(to: url)
        }
        #expect(run.answers.paths() == ["/v1/orders/0", "/v1/orders/2"])
        #expect(run.outbox.items.map(\.id) == [run.items[0].id, run.items[2].id])
        let damaged = try #require(run.outbox.damagedFiles.first)
        #expect(damaged.name == "set-aside/\(run.items[1].id).item")
        #expect(damaged.reason.contains("announces") && damaged.reason.contains("holds"))
        #expect(FileManager.default.fileExists(atPath: scratch.folder.appending(path: damaged.name).path()))
    }

    @Test func aLinkInAnItemsPlaceIsSetAsideWithoutBeingFollowed() async throws {
        defer { scratch.remove() }
        var planted: PlantedLink?
        let run = try await deliverAfterDamage { folder, items in
            let url = file(folder, items[0])
            try FileManager.default.removeItem(at: url)
            planted = try PlantedLink(at: url, victimFolder: scratch.root)
        }
        #expect(run.answers.paths() == ["/v1/orders/1", "/v1/orders/2"])
        #expect(run.outbox.damagedFiles.first?.reason.contains("symbolic link") == true)
        #expect(planted?.victimIsUntouched == true)
        #expect(isSymbolicLink(scratch.folder.appending(path: "set-aside/\(run.items[0].id).item")))
    }

    @Test func aFIFOInAnItemsPlaceNeverBlocksTheOutbox() async throws {
        defer { scratch.remove() }
        let run = try await deliverAfterDamage { folder, items in
            let url = file(folder, items[2])
            try FileManager.default.removeItem(at: url)
            try makeFIFO(at: url)
        }
        #expect(run.answers.paths() == ["/v1/orders/0", "/v1/orders/1"])
        #expect(run.outbox.damagedFiles.first?.reason.contains("not a regular file") == true)
    }

    @Test func hugeLengthsInAHeaderAreADamagedFileNotAnAllocation() async throws {
        defer { scratch.remove() }
        let run = try await deliverAfterDamage { folder, items in
            for (index, length) in [(0, UInt64.max), (1, UInt64(1) << 40)] {
                let url = file(folder, items[index])
                var bytes = try Data(contentsOf: url)
                withUnsafeBytes(of: length.littleEndian) { bytes.replaceSubrange(16..<24, with: $0) }
                try bytes.write(to: url)
            }
            let url = file(folder, items[2])
            var bytes = try Data(contentsOf: url)
            withUnsafeBytes(of: UInt32.max.littleEndian) { bytes.replaceSubrange(8..<12, with: $0) }
            try bytes.write(to: url)
        }
        #expect(run.answers.requests.isEmpty)
        let reasons = run.outbox.damagedFiles.map(\.reason)
        #expect(reasons.count == 3)
        #expect(reasons.contains { $0.contains("more bytes than a file can hold") })
        #expect(reasons.contains { $0.contains("record, more than the") })
    }

    @Test func aCorruptedBodyIsCaughtByItsChecksumBeforeItIsSent() async throws {
        defer { scratch.remove() }
        let run = try await deliverAfterDamage(count: 2) { folder, items in
            let url = file(folder, items[0])
            var bytes = try Data(contentsOf: url)
            bytes[bytes.count - 2] ^= 0xFF
            try bytes.write(to: url)
        }
        #expect(run.answers.paths() == ["/v1/orders/1"])
        #expect(run.outbox.damagedFiles.first?.reason.contains("checksum") == true)
    }

    @Test func anUnreadableStateMakesItsItemPendingAgainWithItsKey() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(503), .status(200)])
        let server = try outboxServer(answers)
        let first = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        let item = try await first.enqueue(PlaceOrder(server: server, item: "tea"))
        try await first.deliverPending(once: true)
        let state = scratch.folder.appending(path: item.id + ".state")
        try Data("garbage".utf8).write(to: state)

        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        #expect(outbox.item(id: item.id)?.lastError?.contains("state file was unreadable") == true)
        try await outbox.deliverPending()
        #expect(outbox.item(id: item.id)?.state.name == "delivered 200")
        #expect(answers.keys() == [item.idempotencyKey, item.idempotencyKey])
    }

    @Test func leftoversOfAKilledEnqueueAreRemovedByTheNextOwner() async throws {
        defer { scratch.remove() }
        let server = try outboxServer(ScriptedAnswers([.status(200)]))
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        // A temporary file of a writer that no longer runs (no process has ID 2^22+1 here), and a state without its item.
        let leftover = scratch.folder.appending(path: ".0000000000000001-00000000.item.4194305-abc.tmp")
        try Data("partial".utf8).write(to: leftover)
        let orphan = scratch.folder.appending(path: "0000000000000002-00000000.state")
        try Data("old".utf8).write(to: orphan)
        try await outbox.deliverPending()
        #expect(!FileManager.default.fileExists(atPath: leftover.path()))
        #expect(!FileManager.default.fileExists(atPath: orphan.path()))
        #expect(outbox.items.isEmpty && outbox.damagedFiles.isEmpty)
    }
}
