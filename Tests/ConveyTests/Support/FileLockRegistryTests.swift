import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The process's releasable file locks, released and retaken together, in the order asked for.
@Suite("File lock registry")
struct FileLockRegistryTests {
    /// A lock that logs what it is told; its release can take a few turns of the executor first,
    /// as an outbox's does while its attempts stop.
    final class LoggingLock: ReleasableFileLock, @unchecked Sendable {
        let name: String
        let log: EventLog
        let releaseTurns: Int
        init(_ name: String, log: EventLog, releaseTurns: Int = 0) {
            self.name = name
            self.log = log
            self.releaseTurns = releaseTurns
        }
        func releaseForSuspension() async {
            for _ in 0..<releaseTurns { await Task.yield() }
            log.add("release \(name)")
        }
        func retakeAfterSuspension() async { log.add("retake \(name)") }
    }

    @Test func everyLockIsReleasedThenRetakenInTheOrderAsked() async {
        let registry = FileLockRegistry()
        let log = EventLog()
        let outbox = LoggingLock("outbox", log: log)
        let claim = LoggingLock("claim", log: log)
        registry.register(outbox)
        registry.register(claim)
        #expect(!registry.isReleased)
        await registry.releaseAll()
        #expect(registry.isReleased)
        await registry.retakeAll()
        #expect(!registry.isReleased)
        let events = log.events
        #expect(Set(events.prefix(2)) == ["release outbox", "release claim"])
        #expect(Set(events.suffix(2)) == ["retake outbox", "retake claim"])
        #expect(events.count == 4)
    }

    @Test func aLockRegisteredWhileReleasedIsReleasedAtOnceAndAGoneOneIsForgotten() async throws {
        let registry = FileLockRegistry()
        let log = EventLog()
        await registry.releaseAll()
        let late = LoggingLock("late", log: log)
        registry.register(late)
        try await waitUntil("the late lock is released") { log.events == ["release late"] }
        do {
            let gone = LoggingLock("gone", log: log)
            registry.register(gone)
        }
        try await waitUntil("the gone lock was released") { log.events.count == 2 }
        await registry.retakeAll()
        // Only the lock still alive is retaken: the registry holds its locks weakly.
        #expect(log.events.filter { $0.hasPrefix("retake") } == ["retake late"])
    }

    @Test func requestsMadeBackToBackRunInOrder() async {
        let registry = FileLockRegistry()
        let log = EventLog()
        let lock = LoggingLock("l", log: log)
        registry.register(lock)
        async let first: Void = registry.releaseAll()
        await first
        async let second: Void = registry.retakeAll()
        async let third: Void = registry.releaseAll()
        _ = await (second, third)
        #expect(log.events.first == "release l")
        #expect(log.events.count == 3)
        #expect(registry.isReleased == log.events.last?.hasPrefix("release"))
    }

    @Test func aLockRegisteredWhileReleasedIsReleasedBeforeARetakeAskedRightAfter() async {
        let registry = FileLockRegistry()
        let log = EventLog()
        await registry.releaseAll()
        let late = LoggingLock("late", log: log, releaseTurns: 50)
        #expect(registry.register(late))
        await registry.retakeAll()
        // Its release comes first, however long it takes: it never ends released while the registry is not.
        #expect(log.events == ["release late", "retake late"])
        #expect(!registry.isReleased)
    }

    @Test func theAppEnteringTheBackgroundBeginsABackgroundTaskAtOnceAndEndsItAfterTheRelease() async throws {
        let registry = FileLockRegistry()
        let log = EventLog()
        let tasks = BackgroundRunAssertionTests.RecordingTasks()
        let lock = LoggingLock("outbox", log: log, releaseTurns: 20)
        registry.register(lock)
        registry.appEnteredBackground(tasks: tasks)
        // Begun before the notification's handler returns, not later on another turn.
        #expect(tasks.log == ["begin 1"])
        #expect(registry.isReleased)
        try await waitUntil("the task ends after the release") { tasks.log == ["begin 1", "end 1"] }
        #expect(log.events == ["release outbox"])

        // Back to back: the retake waits for the release before it.
        registry.appEnteredBackground(tasks: tasks)
        registry.appWillEnterForeground()
        try await waitUntil("both ran") { log.events.count == 3 }
        #expect(log.events == ["release outbox", "release outbox", "retake outbox"])
        #expect(!registry.isReleased)
    }

    @Test func fileLocksReleasesAndRetakesTheLocksOfTheCurrentRegistry() async {
        let registry = FileLockRegistry()
        let log = EventLog()
        let lock = LoggingLock("outbox", log: log)
        await FileLockRegistry.$current.withValue(registry) {
            FileLockRegistry.current.register(lock)
            await FileLocks.releaseForSuspension()
            #expect(registry.isReleased)
            #expect(log.events == ["release outbox"])
            await FileLocks.retakeAfterSuspension()
            #expect(!registry.isReleased)
        }
        #expect(log.events == ["release outbox", "retake outbox"])
        #expect(!FileLockRegistry.shared.isReleased)
    }
}
