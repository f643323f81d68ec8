import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Sizes beyond what a 32-bit `Int` counts (watchOS), converted without a trap: checked here with
/// `Int32` as the counter, on a machine whose own `Int` has 64 bits.
@Suite("Memory sizes on 32 bits")
struct MemorySizesTests {
    private let threeGiB: Int64 = 3 << 30

    @Test func aLimitBeyondInt32IsLoweredToWhatA32BitCounterHolds() {
        #expect(MemorySizes.bufferLimit(threeGiB, countingIn: Int32.self) == Int64(Int32.max) - 1)
        #expect(MemorySizes.bufferLimit(.max, countingIn: Int32.self) == Int64(Int32.max) - 1)
        #expect(MemorySizes.bufferLimit(16 << 20, countingIn: Int32.self) == 16 << 20)
        #expect(MemorySizes.bufferLimit(-5, countingIn: Int32.self) == 0)
        #expect(MemorySizes.bufferLimit(threeGiB, countingIn: Int64.self) == threeGiB)
    }

    @Test func theReadCountIsOnePastTheLimitAndAlwaysFits() {
        #expect(MemorySizes.readCount(toExceed: threeGiB, as: Int32.self) == .max)
        #expect(MemorySizes.readCount(toExceed: Int64(Int32.max), as: Int32.self) == .max)
        #expect(MemorySizes.readCount(toExceed: 8, as: Int32.self) == 9)
        #expect(MemorySizes.readCount(toExceed: .max, as: Int64.self) == .max)
        #expect(MemorySizes.readCount(toExceed: .max) == Int.max)
    }

    @Test func aSumThatOverflowsIsTheLargestSize() {
        #expect(MemorySizes.sum(.max, 40) == .max)
        #expect(MemorySizes.sum(threeGiB, threeGiB) == 6 << 30)
    }

    @Test func zlibIsOfferedAtMostUInt32MaxBytesAtOnce() {
        #expect(ContentDecoder.inputLength(Int64(5) << 30) == .max)
        #expect(ContentDecoder.inputLength(Int64(UInt32.max) + 1) == .max)
        #expect(ContentDecoder.inputLength(Int32.max) == UInt32(Int32.max))
        #expect(ContentDecoder.inputLength(0) == 0)
    }

    @Test func anOutboxWhoseBodyLimitIsTheLargestSizeReadsAndSendsItsItems() async throws {
        let scratch = OutboxScratch()
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(201)])
        let server = try await outboxServer(answers)
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()) {
            $0.maximumBodySize = .max
        })
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        try await outbox.deliverPending()
        #expect(await outbox.item(id: item.id)?.state.name == "delivered 201")
        #expect(answers.requests.count == 1)
    }
}
