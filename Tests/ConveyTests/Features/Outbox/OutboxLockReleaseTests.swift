#if os(Linux)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The outbox's folder lock let go of for the app's suspension (`FileLocks`) and taken again,
/// with another process waiting for it meanwhile.
@Suite("Outbox: the lock around a suspension", .enabled(if: FlockProcess.isAvailable, "needs flock(1)"))
@ConveyActor
struct OutboxLockReleaseTests {
    let scratch = OutboxScratch()

    @Test func anotherProcessGetsTheLockWhileReleasedAndDeliveryResumesAfterItLetsGo() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(201)])
        let server = try outboxServer(answers)
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
        let lockPath = FolderLock.path(in: outbox.store.path)
        let delivery = Task { @ConveyActor in try await outbox.run() }
        defer { delivery.cancel() }
        try await waitUntil("the outbox owns its folder") { outbox.ownership != nil }
        #expect(try FlockProcess.isLocked(lockPath))

        let other = try FlockProcess(locking: lockPath)
        defer { other.finish() }
        await outbox.releaseFolderLock()
        #expect(outbox.ownership == nil)
        try await waitUntil("the other process takes the lock") { other.hasTaken }

        // Retaken while the other process holds it: the outbox waits, and sends nothing meanwhile.
        outbox.retakeFolderLock()
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        #expect(answers.requests.isEmpty)
        #expect(outbox.ownership == nil)

        other.finish()
        try await waitUntil("the item is delivered") { outbox.item(id: item.id)?.isFinished == true }
        #expect(outbox.item(id: item.id)?.state.name == "delivered 201")
        #expect(outbox.ownership != nil)
        #expect(try FlockProcess.isLocked(lockPath))
    }

    @Test func releasingStopsAttemptsInFlightTheirItemsStayPending() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(201)])
        let server = try outboxServer(answers)
        let stubbed = answers.transport
        let calls = EventLog()
        server.transport = StubTransport { request in
            calls.add("send")
            // The first attempt hangs until it is stopped.
            if calls.events.count == 1 { try await Task.sleep(for: .seconds(3600)) }
            return try await stubbed.send(request)
        }
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        let delivery = Task { @ConveyActor in try await outbox.run() }
        defer { delivery.cancel() }
        try await waitUntil("the attempt is at the transport") { calls.events.count == 1 }

        await outbox.releaseFolderLock()
        #expect(outbox.inFlight.isEmpty)
        #expect(outbox.item(id: item.id)?.state.name == "pending")
        #expect(!(try FlockProcess.isLocked(FolderLock.path(in: outbox.store.path))))

        outbox.retakeFolderLock()
        try await waitUntil("the item is delivered") { outbox.item(id: item.id)?.isFinished == true }
        #expect(outbox.item(id: item.id)?.attempts == 2)
    }
}
#endif
