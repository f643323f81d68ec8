#if canImport(CConveyCurlShim)
import Testing
@testable import Convey

/// How CurlTransport admits transfers per origin.
struct CurlHostQueuesTests {
    final class Item {}

    @Test func transfersBeyondTheLimitWaitFirstComeFirstServed() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 2)
        let items = (0..<5).map { _ in Item() }
        let admitted = items.map { queues.admit($0, origin: "a") }
        #expect(admitted == [true, true, false, false, false])
        let otherOrigin = queues.admit(Item(), origin: "b")
        #expect(otherOrigin)
        #expect(queues.waitingCount == 3)
        let first = queues.finished(origin: "a", multiplexed: false)
        #expect(first.map(ObjectIdentifier.init) == [ObjectIdentifier(items[2])])
        let second = queues.finished(origin: "a", multiplexed: false)
        #expect(second.map(ObjectIdentifier.init) == [ObjectIdentifier(items[3])])
        #expect(queues.waitingCount == 1)
    }

    @Test func aMultiplexingOriginAdmitsManyAtOnce() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 1, streamsPerMultiplexedOrigin: 10)
        let firstAdmitted = queues.admit(Item(), origin: "h2")
        #expect(firstAdmitted)
        let laterAdmitted = (0..<12).map { _ in queues.admit(Item(), origin: "h2") }
        #expect(laterAdmitted.allSatisfy { !$0 })
        let released = queues.finished(origin: "h2", multiplexed: true)
        #expect(released.count == 10)
        #expect(queues.waitingCount == 2)
    }

    @Test func cancelledWaitersLeaveTheQueue() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 1)
        let running = Item(), waiting = Item(), stranger = Item()
        let admitted = [queues.admit(running, origin: "a"), queues.admit(waiting, origin: "a")]
        #expect(admitted == [true, false])
        let removed = [queues.removeWaiting(waiting, origin: "a"), queues.removeWaiting(stranger, origin: "a")]
        #expect(removed == [true, false])
        let released = queues.finished(origin: "a", multiplexed: false)
        #expect(released.isEmpty)
        #expect(queues.waitingCount == 0)
    }

    @Test func zeroMeansNoLimit() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 0)
        let admitted = (0..<1_000).map { _ in queues.admit(Item(), origin: "a") }
        #expect(admitted.allSatisfy { $0 })
    }

    @Test func longQueuesDrainInOrder() {
        var queues = CurlHostQueues<Item>(connectionsPerOrigin: 1)
        let items = (0..<500).map { _ in Item() }
        for item in items { _ = queues.admit(item, origin: "a") }
        var order: [ObjectIdentifier] = [ObjectIdentifier(items[0])]
        while true {
            let next = queues.finished(origin: "a", multiplexed: false)
            guard let item = next.first else { break }
            order.append(ObjectIdentifier(item))
        }
        #expect(order == items.map(ObjectIdentifier.init))
        #expect(queues.waitingCount == 0)
    }
}
#endif
