#if os(Linux) && canImport(CConveyCurlShim)
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// How CurlTransport admits transfers per origin, and to which of its event loops.
struct CurlHostQueuesTests {
    final class Item {}

    @Test func transfersBeyondTheLimitWaitFirstComeFirstServed() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 2)
        let items = (0..<5).map { _ in Item() }
        let admitted = items.map { queues.admit($0, origin: "a") }
        #expect(admitted == [0, 0, nil, nil, nil])
        let otherOrigin = queues.admit(Item(), origin: "b")
        #expect(otherOrigin == 0)
        #expect(queues.waitingCount == 3)
        let first = queues.finished(origin: "a", loop: 0, multiplexed: false)
        #expect(first.map { ObjectIdentifier($0.item) } == [ObjectIdentifier(items[2])])
        let second = queues.finished(origin: "a", loop: 0, multiplexed: false)
        #expect(second.map { ObjectIdentifier($0.item) } == [ObjectIdentifier(items[3])])
        #expect(queues.waitingCount == 1)
    }

    @Test func aMultiplexingOriginAdmitsManyAtOnce() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 1, streamsPerMultiplexedOrigin: 10)
        let firstAdmitted = queues.admit(Item(), origin: "h2")
        #expect(firstAdmitted == 0)
        let laterAdmitted = (0..<12).map { _ in queues.admit(Item(), origin: "h2") }
        #expect(laterAdmitted.allSatisfy { $0 == nil })
        let released = queues.finished(origin: "h2", loop: 0, multiplexed: true)
        #expect(released.count == 10)
        #expect(queues.waitingCount == 2)
    }

    @Test func cancelledWaitersLeaveTheQueue() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 1)
        let running = Item(), waiting = Item(), stranger = Item()
        let admitted = [queues.admit(running, origin: "a"), queues.admit(waiting, origin: "a")]
        #expect(admitted == [0, nil])
        let removed = [queues.removeWaiting(waiting, origin: "a"), queues.removeWaiting(stranger, origin: "a")]
        #expect(removed == [true, false])
        let released = queues.finished(origin: "a", loop: 0, multiplexed: false)
        #expect(released.isEmpty)
        #expect(queues.waitingCount == 0)
    }

    @Test func zeroMeansNoLimit() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 0)
        let admitted = (0..<1_000).map { _ in queues.admit(Item(), origin: "a") }
        #expect(admitted.allSatisfy { $0 == 0 })
    }

    @Test func longQueuesDrainInOrder() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 1)
        let items = (0..<500).map { _ in Item() }
        for item in items { _ = queues.admit(item, origin: "a") }
        var order: [ObjectIdentifier] = [ObjectIdentifier(items[0])]
        while true {
            let next = queues.finished(origin: "a", loop: 0, multiplexed: false)
            guard let item = next.first?.item else { break }
            order.append(ObjectIdentifier(item))
        }
        #expect(order == items.map(ObjectIdentifier.init))
        #expect(queues.waitingCount == 0)
    }

    @Test func anAdmittedItemIsNotKeptByTheQueue() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 1)
        _ = queues.admit(Item(), origin: "a")
        weak var admitted: Item?
        do {
            let waiting = Item()
            admitted = waiting
            #expect(queues.admit(waiting, origin: "a") == nil)
            #expect(queues.finished(origin: "a", loop: 0, multiplexed: false).count == 1)
        }
        // Others still wait behind it, so the queue is not compacted: the slot must let go.
        _ = queues.admit(Item(), origin: "a")
        #expect(admitted == nil)
    }

    // MARK: Several loops

    @Test func theLimitIsSplitBetweenLoopsAndHoldsInTotal() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 5, loops: 2)
        let admitted = (0..<8).map { _ in queues.admit(Item(), origin: "a") }
        // Shares of 3 and 2; the roomier loop first, the first one on a tie; then 3 wait.
        #expect(admitted == [0, 0, 1, 0, 1, nil, nil, nil])
        #expect(queues.admittedPerLoop == [3, 2])
        #expect(queues.waitingCount == 3)
    }

    @Test func aWaiterTakesThePlaceFreedOnItsLoop() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 2, loops: 2)
        let admitted = (0..<4).map { _ in queues.admit(Item(), origin: "a") }
        #expect(admitted == [0, 1, nil, nil])
        let afterLoop1 = queues.finished(origin: "a", loop: 1, multiplexed: false)
        #expect(afterLoop1.map(\.loop) == [1])
        let afterLoop0 = queues.finished(origin: "a", loop: 0, multiplexed: false)
        #expect(afterLoop0.map(\.loop) == [0])
        #expect(queues.waitingCount == 0)
    }

    @Test func aLightLoadStaysOnTheFirstLoop() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 6, loops: 4)
        for _ in 0..<10 {
            let loop = queues.admit(Item(), origin: "a")
            #expect(loop == 0)
            _ = queues.finished(origin: "a", loop: 0, multiplexed: false)
        }
        #expect(queues.admittedPerLoop == [10, 0, 0, 0])
    }

    @Test func aLimitBelowTheLoopCountUsesOneLoopPerConnection() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 1, loops: 3)
        let admitted = (0..<3).map { _ in queues.admit(Item(), origin: "a") }
        #expect(admitted == [0, nil, nil])
        let released = queues.finished(origin: "a", loop: 0, multiplexed: false)
        #expect(released.map(\.loop) == [0])
    }

    @Test func noLimitSpreadsEvenly() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 0, loops: 3)
        for _ in 0..<9 { _ = queues.admit(Item(), origin: "a") }
        #expect(queues.admittedPerLoop == [3, 3, 3])
    }

    @Test func multiplexedStreamsAreSplitBetweenTheLoopsThatHoldAConnection() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 2, streamsPerMultiplexedOrigin: 10, loops: 4)
        let first = (0..<2).map { _ in queues.admit(Item(), origin: "h2") }
        #expect(first == [0, 1])
        let waiting = (0..<20).map { _ in queues.admit(Item(), origin: "h2") }
        #expect(waiting.allSatisfy { $0 == nil })
        let released = queues.finished(origin: "h2", loop: 0, multiplexed: true)
        // 10 streams over the 2 loops with a connection: 5 each, one still running on loop 1.
        #expect(released.count == 9)
        #expect(Set(released.map(\.loop)) == [0, 1])
        #expect(queues.waitingCount == 11)
    }
}
#endif
