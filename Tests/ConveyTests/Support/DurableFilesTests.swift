import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Durable syncs run on a thread of their own, never on the caller's (the cooperative pool), and a
/// fallback from F_FULLFSYNC to fsync is reported.
@Suite("Durable syncs")
struct DurableFilesTests {
    /// The names of the threads syncs ran on while `body` ran (every sync in the process meanwhile).
    private func syncThreads(during body: () async throws -> Void) async rethrows -> [String?] {
        let seen = EventLog()
        let stop = DurableFiles.observeSyncs { seen.add($0 ?? "<unnamed>") }
        defer { stop() }
        try await body()
        return seen.events
    }

    @Test func anOutboxsEnqueueAndDeliverySyncOnTheSyncThreadOnly() async throws {
        let scratch = OutboxScratch()
        defer { scratch.remove() }
        let server = try await outboxServer(ScriptedAnswers([.status(201)]))
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
        let threads = try await syncThreads {
            _ = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
            try await outbox.deliverPending()
        }
        // The item's file and the folder at enqueue, the delivered state and the folder after.
        #expect(threads.count >= 4)
        #expect(threads.allSatisfy { $0 == DurableFiles.threadName }, "\(threads)")
    }

    @Test func aSyncFromAnyThreadRunsOnTheSyncThreadAndAFolderSyncToo() async throws {
        let folder = try OpenSSL.scratchFolder("durable")
        let file = folder.appending(path: "f")
        try Data("bytes".utf8).write(to: file)
        let descriptor = open(file.path(percentEncoded: false), O_RDWR)
        defer { close(descriptor) }
        let threads = try await syncThreads {
            #expect(DurableFiles.sync(descriptor) == 0)
            try DurableFiles.syncFolder(atPath: folder.path(percentEncoded: false))
            // From a task: the work runs off the pool and its sync on the sync thread.
            let code = await DurableFiles.perform { DurableFiles.sync(descriptor) }
            #expect(code == 0)
        }
        #expect(threads.count >= 3)
        #expect(threads.allSatisfy { $0 == DurableFiles.threadName }, "\(threads)")
    }

    @Test func aFolderThatCannotBeOpenedIsAFileFailure() {
        let failure = #expect(throws: FileFailure.self) { try DurableFiles.syncFolder(atPath: "/nonexistent-\(UUID().uuidString)") }
        #expect(failure?.code == ENOENT)
        #expect(failure?.action == "open the folder")
    }

    @Test func aRefusedFullSyncFallsBackToFsyncAndIsReportedOncePerFileSystem() throws {
        let folder = try OpenSSL.scratchFolder("fallback")
        let file = folder.appending(path: "f")
        try Data("bytes".utf8).write(to: file)
        let descriptor = open(file.path(percentEncoded: false), O_RDWR)
        defer { close(descriptor) }
        let reports = EventLog()
        let report = DurableFiles.FallbackReport { reports.add($0) }
        let refusing = DurableFiles.Primitives(fullSync: { _ in ENOTSUP }, fsync: DurableFiles.Primitives.system.fsync)
        let before = DurableFiles.fallbackCount
        #expect(DurableFiles.sync(descriptor, primitives: refusing, fallbacks: report) == 0)
        #expect(DurableFiles.sync(descriptor, primitives: refusing, fallbacks: report) == 0)
        #expect(DurableFiles.fallbackCount >= before + 2)
        #expect(reports.events == ["Convey: F_FULLFSYNC failed on a file system (Operation not supported): fell back to fsync, "
            + "which may leave the bytes in the drive's cache"])
    }

    @Test func whenFsyncFailsTooItsErrorIsTheResultAndAFullSyncThatWorksNeedsNoFsync() throws {
        let folder = try OpenSSL.scratchFolder("fallback")
        let file = folder.appending(path: "f")
        try Data("bytes".utf8).write(to: file)
        let descriptor = open(file.path(percentEncoded: false), O_RDWR)
        defer { close(descriptor) }
        let failing = DurableFiles.Primitives(fullSync: { _ in ENOTSUP }, fsync: { _ in EIO })
        #expect(DurableFiles.sync(descriptor, primitives: failing, fallbacks: DurableFiles.FallbackReport { _ in }) == EIO)
        let fullOnly = DurableFiles.Primitives(fullSync: { _ in 0 }, fsync: { _ in EIO })
        let reports = EventLog()
        #expect(DurableFiles.sync(descriptor, primitives: fullOnly, fallbacks: DurableFiles.FallbackReport { reports.add($0) }) == 0)
        #expect(reports.events.isEmpty)
    }
}
