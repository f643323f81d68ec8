import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// An outbox whose files' protected data is unavailable (a locked device), made so by injecting
/// EPERM and EACCES into Convey's file opens (these tests run as root, which permission bits do
/// not stop): its items stay pending, nothing is set aside, and delivery resumes once they can be read.
@Suite("Outbox on a locked device")
@ConveyActor
struct OutboxLockedDeviceTests {
    let scratch = OutboxScratch()
    let clock = ManualOutboxClock()

    private func files() throws -> [String: Data] {
        Dictionary(uniqueKeysWithValues: try scratch.allBytes().filter { !$0.name.hasPrefix(".") }.map { ($0.name, $0.bytes) })
    }

    @Test func itemsStayPendingNothingIsSetAsideAndTheyAreDeliveredOnceReadable() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(201)])
        let server = try outboxServer(answers)
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        let first = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        let second = try await outbox.enqueue(PlaceOrder(server: server, item: "cake"))
        let before = try files()

        let lock = FileAccessFaults.lockDevice(failing: EPERM, under: scratch.folder.path(percentEncoded: false))
        try await outbox.deliverPending(once: true)
        #expect(answers.requests.isEmpty)
        #expect(outbox.items.map(\.id) == [first.id, second.id])
        #expect(outbox.items.allSatisfy { $0.state.name == "pending" && $0.attempts == 0 })
        #expect(outbox.damagedFiles.isEmpty)
        #expect(try files() == before)

        // A fresh outbox opened while locked sees no item yet, and sets none aside.
        let fresh = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        #expect(fresh.items.isEmpty)
        #expect(fresh.damagedFiles.isEmpty)
        #expect(fresh.protectedDataUnavailable)
        #expect(!FileManager.default.fileExists(atPath: scratch.folder.appending(path: OutboxFolder.setAsideFolderName).path(percentEncoded: false)))

        lock.remove()
        try await outbox.deliverPending()
        #expect(answers.paths() == ["/v1/orders/tea", "/v1/orders/cake"])
        #expect(outbox.items.map(\.state.name) == ["delivered 201", "delivered 201"])
        await fresh.refresh()
        #expect(fresh.items.map(\.id) == [first.id, second.id])
    }

    @Test func runPausesWhileLockedAndResumesWhenTheDataIsAvailable() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(201)])
        let server = try outboxServer(answers)
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))

        let lock = FileAccessFaults.lockDevice(failing: EACCES, under: scratch.folder.path(percentEncoded: false))
        let delivery = Task { @ConveyActor in try await outbox.run() }
        defer { delivery.cancel() }
        try await waitUntil("delivery pauses for the protected data") { outbox.protectedDataUnavailable }
        #expect(answers.requests.isEmpty)
        #expect(outbox.item(id: item.id)?.state.name == "pending")
        #expect(outbox.damagedFiles.isEmpty)

        lock.remove()
        try await waitUntil("the item is delivered") { outbox.item(id: item.id)?.isFinished == true }
        #expect(outbox.item(id: item.id)?.state.name == "delivered 201")
        #expect(!outbox.protectedDataUnavailable)
        #expect(answers.requests.count == 1)
    }

    /// The folder's lock file, made as an earlier delivery leaves it: a locked device fails its open.
    private func makeLockFile() throws {
        try FileManager.default.createDirectory(at: scratch.folder, withIntermediateDirectories: true)
        try Data().write(to: scratch.folder.appending(path: ".lock"))
    }

    @Test func aLockFileUnreadableOnALockedDeviceMakesRunWaitNotThrow() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(201)])
        let server = try outboxServer(answers)
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        try makeLockFile()

        let lock = FileAccessFaults.lockDevice(failing: EPERM, under: scratch.folder.path(percentEncoded: false))
        let delivery = Task { @ConveyActor in try await outbox.run() }
        defer { delivery.cancel() }
        try await waitUntil("delivery waits for the lock file") { outbox.lockFileUnavailable }
        #expect(outbox.ownership == nil)
        #expect(answers.requests.isEmpty)

        lock.remove()
        try await waitUntil("the item is delivered") { outbox.item(id: item.id)?.isFinished == true }
        #expect(outbox.item(id: item.id)?.state.name == "delivered 201")
        #expect(!outbox.lockFileUnavailable)
    }

    @Test func aLockFileUnreadableOnALockedDeviceMakesDeliverPendingWaitAndOnceReturn() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(201)])
        let server = try outboxServer(answers)
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        try makeLockFile()

        let lock = FileAccessFaults.lockDevice(failing: EACCES, under: scratch.folder.path(percentEncoded: false))
        try await outbox.deliverPending(once: true)
        #expect(outbox.item(id: item.id)?.state.name == "pending")
        #expect(outbox.item(id: item.id)?.attempts == 0)

        let delivery = Task { @ConveyActor in try await outbox.deliverPending() }
        try await waitUntil("delivery waits for the lock file") { outbox.lockFileUnavailable }
        lock.remove()
        try await delivery.value
        #expect(outbox.item(id: item.id)?.state.name == "delivered 201")
        #expect(answers.requests.count == 1)
    }

    @Test func aPermissionErrorWhereTheSystemHasNoDataProtectionIsReported() async throws {
        defer { scratch.remove() }
        #expect(ProtectedData.systemAvailability == .absent)
        let answers = ScriptedAnswers([.status(201)])
        let server = try outboxServer(answers)
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        _ = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        try makeLockFile()

        let denied = FileAccessFaults.inject(EPERM, under: scratch.folder.path(percentEncoded: false))
        defer { denied.remove() }
        for once in [true, false] {
            await #expect {
                try await outbox.deliverPending(once: once)
            } throws: { error in
                guard case ConveyError.outboxStorageFailed(let reason) = error else { return false }
                return reason.contains(".lock") && reason.contains("Operation not permitted")
            }
        }
        await #expect(throws: ConveyError.self) { try await outbox.run() }
        #expect(answers.requests.isEmpty)
    }

    @Test func anEnqueueWhileLockedFailsAsStorageAndLeavesNothing() async throws {
        defer { scratch.remove() }
        let server = try outboxServer(ScriptedAnswers([.status(201)]))
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        let lock = FileAccessFaults.lockDevice(failing: EPERM, under: scratch.folder.path(percentEncoded: false))
        defer { lock.remove() }
        await #expect {
            try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        } throws: { error in
            guard case ConveyError.outboxStorageFailed(let reason) = error else { return false }
            return reason.contains("Operation not permitted")
        }
        #expect(outbox.items.isEmpty)
        #expect(try files().isEmpty)
    }
}
