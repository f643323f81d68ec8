#if os(Linux)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The outbox's folder lock let go of for the app's suspension (`FileLocks`) and taken again,
/// with another process waiting for it meanwhile. The tests that go through the public
/// `FileLocks` give their outboxes a registry of their own (`FileLockRegistry.current`), so that
/// releasing it leaves the other tests' locks alone.
@Suite("Outbox: the lock around a suspension", .enabled(if: FlockProcess.isAvailable, "needs flock(1)"), .timeLimit(.minutes(2)))
@ConveyActor
struct OutboxLockReleaseTests {
    let scratch = OutboxScratch()

    /// A transport that answers 201 once requests are let through (`open()`), and notes each request.
    final class GatedTransport: @unchecked Sendable {  // guarded by: `lock`
        private let lock = NSLock()
        private var isOpen = false
        private var waiting: [UUID: CheckedContinuation<Void, Never>] = [:]
        let arrivals = EventLog()

        /// Lets the requests waiting, and every later one, through.
        func open() {
            let released = lock.withLock {
                isOpen = true
                defer { waiting = [:] }
                return Array(waiting.values)
            }
            for continuation in released { continuation.resume() }
        }

        /// Returns once the gate is open; throws `CancellationError` when the calling task is cancelled first.
        private func pass() async throws {
            let key = UUID()
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now: Bool = lock.withLock {
                        if isOpen || Task.isCancelled { return true }
                        waiting[key] = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                lock.withLock { waiting.removeValue(forKey: key) }?.resume()
            }
            try Task.checkCancellation()
        }

        var transport: StubTransport {
            StubTransport { [self] request in
                arrivals.add(request.request.url.path())
                try await pass()
                return TransportResponse(url: request.request.url, statusCode: 201, headers: [:], body: Data())
            }
        }
    }

    private func lockPath(_ outbox: Outbox) -> String { FolderLock.path(in: outbox.store.path) }

    @Test func deliverPendingOnceWhileReleasedSaysWhyThenDeliversBetweenARetakeAndARelease() async throws {
        defer { scratch.remove() }
        try await FileLockRegistry.$current.withValue(FileLockRegistry()) {
            let answers = ScriptedAnswers([.status(201)])
            let server = try outboxServer(answers)
            let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
            let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))

            await FileLocks.releaseForSuspension()
            await #expect {
                try await outbox.deliverPending(once: true)
            } throws: { error in
                guard case ConveyError.outboxFolderInUse(let reason) = error else { return false }
                return reason.contains("FileLocks.retakeAfterSuspension()")
            }
            await #expect(throws: ConveyError.self) { try await outbox.deliverPending() }
            #expect(answers.requests.isEmpty)
            #expect(!(try FlockProcess.isLocked(lockPath(outbox))))

            // What an app does in a background task: retake, deliver, release.
            await FileLocks.retakeAfterSuspension()
            try await outbox.deliverPending(once: true)
            await FileLocks.releaseForSuspension()
            #expect(outbox.item(id: item.id)?.state.name == "delivered 201")
            #expect(!(try FlockProcess.isLocked(lockPath(outbox))))
        }
    }

    @Test func deliverPendingOnceReleasedMidAttemptStopsItAndSaysWhy() async throws {
        defer { scratch.remove() }
        try await FileLockRegistry.$current.withValue(FileLockRegistry()) {
            let gated = GatedTransport()
            let server = try outboxServer(ScriptedAnswers([.status(201)]))
            server.transport = gated.transport
            let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
            let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
            let delivery = Task { @ConveyActor in try await outbox.deliverPending(once: true) }
            try await waitUntil("the attempt is at the transport") { gated.arrivals.events.count == 1 }

            await FileLocks.releaseForSuspension()
            await #expect(throws: ConveyError.self) { try await delivery.value }
            #expect(outbox.item(id: item.id)?.state.name == "pending")
            #expect(outbox.item(id: item.id)?.attempts == 1)
            #expect(!(try FlockProcess.isLocked(lockPath(outbox))))
        }
    }

    @Test func aDropWhileReleasedLeavesTheFolderUnlockedWhileRunWaits() async throws {
        defer { scratch.remove() }
        try await FileLockRegistry.$current.withValue(FileLockRegistry()) {
            let answers = ScriptedAnswers([.status(201)])
            let server = try outboxServer(answers)
            let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
            let delivery = Task { @ConveyActor in try await outbox.run() }
            defer { delivery.cancel() }
            try await waitUntil("the outbox owns its folder") { outbox.ownership != nil }

            await FileLocks.releaseForSuspension()
            #expect(!(try FlockProcess.isLocked(lockPath(outbox))))
            let first = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
            let second = try await outbox.enqueue(PlaceOrder(server: server, item: "cake"))
            try await outbox.drop(first.id)
            #expect(outbox.item(id: first.id) == nil)
            #expect(outbox.ownership == nil)
            #expect(!(try FlockProcess.isLocked(lockPath(outbox))))
            #expect(answers.requests.isEmpty)

            await FileLocks.retakeAfterSuspension()
            try await waitUntil("the item left is delivered") { outbox.item(id: second.id)?.isFinished == true }
            #expect(answers.paths() == ["/v1/orders/cake"])
            #expect(try FlockProcess.isLocked(lockPath(outbox)))
        }
    }

    @Test func anAttemptTheBackgroundKeepsFinishesBeforeTheLockIsLetGo() async throws {
        defer { scratch.remove() }
        try await FileLockRegistry.$current.withValue(FileLockRegistry()) {
            let gated = GatedTransport()
            // The attempt's run holds an assertion of the test's own, not the process's.
            let tasks = BackgroundRunAssertionTests.RecordingTasks()
            let assertion = BackgroundRunAssertion(tasks: tasks)
            let server = try outboxServer(ScriptedAnswers([.status(201)])) {
                $0.finishesRunsInBackground = true
                $0.backgroundRunAssertion = assertion
            }
            server.transport = gated.transport
            let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
            let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
            let delivery = Task { @ConveyActor in try await outbox.run() }
            defer { delivery.cancel() }
            try await waitUntil("the attempt is at the transport") { gated.arrivals.events.count == 1 }

            #expect(assertion.isHeld)
            let release = Task { @ConveyActor in await FileLocks.releaseForSuspension() }
            try await waitUntil("the release is asked for") { outbox.lockReleased }
            // Kept: not stopped, the folder still locked while it finishes.
            #expect(outbox.inFlight.count == 1)
            #expect(try FlockProcess.isLocked(lockPath(outbox)))

            gated.open()
            await release.value
            #expect(outbox.item(id: item.id)?.state.name == "delivered 201")
            #expect(outbox.item(id: item.id)?.attempts == 1)
            #expect(!(try FlockProcess.isLocked(lockPath(outbox))))
        }
    }

    @Test func anAttemptTheBackgroundKeptIsStoppedWhenTheSystemTakesTheTimeBack() async throws {
        defer { scratch.remove() }
        try await FileLockRegistry.$current.withValue(FileLockRegistry()) {
            let gated = GatedTransport()
            // The attempt's run holds an assertion of the test's own, not the process's.
            let tasks = BackgroundRunAssertionTests.RecordingTasks()
            let assertion = BackgroundRunAssertion(tasks: tasks)
            let server = try outboxServer(ScriptedAnswers([.status(201)])) {
                $0.finishesRunsInBackground = true
                $0.backgroundRunAssertion = assertion
            }
            server.transport = gated.transport
            let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
            let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
            let delivery = Task { @ConveyActor in try await outbox.run() }
            defer { delivery.cancel() }
            try await waitUntil("the attempt is at the transport") { gated.arrivals.events.count == 1 }

            #expect(assertion.isHeld)
            let release = Task { @ConveyActor in await FileLocks.releaseForSuspension() }
            try await waitUntil("the release is asked for") { outbox.lockReleased }
            #expect(try FlockProcess.isLocked(lockPath(outbox)))
            tasks.expire(1)
            await release.value
            #expect(outbox.item(id: item.id)?.state.name == "pending")
            #expect(outbox.item(id: item.id)?.attempts == 1)
            #expect(!(try FlockProcess.isLocked(lockPath(outbox))))
        }
    }

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
