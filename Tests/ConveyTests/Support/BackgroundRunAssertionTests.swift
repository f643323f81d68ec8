import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The background-task assertion runs in flight hold: begun by the first, ended after the last.
@Suite("Background run assertion")
struct BackgroundRunAssertionTests {
    /// Background tasks that log what they are asked, and can expire one.
    final class RecordingTasks: BackgroundTasks, @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0
        private(set) var log: [String] = []
        private var expiries: [BackgroundTaskToken: @Sendable () -> Void] = [:]

        func begin(name: String, expired: @escaping @Sendable () -> Void) -> BackgroundTaskToken? {
            lock.withLock {
                next += 1
                let token = BackgroundTaskToken(identifier: next)
                expiries[token] = expired
                log.append("begin \(next)")
                return token
            }
        }

        func end(_ token: BackgroundTaskToken) {
            lock.withLock { log.append("end \(token.identifier)") }
        }

        /// The system takes the time of task `identifier` back.
        func expire(_ identifier: Int) {
            let expired = lock.withLock { expiries[BackgroundTaskToken(identifier: identifier)] }
            expired?()
        }
    }

    @Test func theFirstRunBeginsItAndTheLastEndsIt() {
        let tasks = RecordingTasks()
        let assertion = BackgroundRunAssertion(tasks: tasks)
        assertion.runStarted()
        assertion.runStarted()
        assertion.runEnded()
        #expect(assertion.isHeld)
        #expect(tasks.log == ["begin 1"])
        assertion.runEnded()
        #expect(!assertion.isHeld)
        #expect(assertion.runsInFlight == 0)
        assertion.runStarted()
        assertion.runEnded()
        #expect(tasks.log == ["begin 1", "end 1", "begin 2", "end 2"])
    }

    @Test func anExpiredAssertionEndsAtOnceAndTheNextRunAfterTheLastBeginsANewOne() {
        let tasks = RecordingTasks()
        let assertion = BackgroundRunAssertion(tasks: tasks)
        assertion.runStarted()
        assertion.runStarted()
        tasks.expire(1)
        #expect(!assertion.isHeld)
        assertion.runEnded()
        assertion.runEnded()
        assertion.runStarted()
        assertion.runEnded()
        #expect(tasks.log == ["begin 1", "end 1", "begin 2", "end 2"])
    }

    @Test func manyRunsOnManyThreadsBeginAndEndItInPairs() async {
        let tasks = RecordingTasks()
        let assertion = BackgroundRunAssertion(tasks: tasks)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    assertion.runStarted()
                    assertion.runEnded()
                }
            }
        }
        #expect(assertion.runsInFlight == 0)
        #expect(!assertion.isHeld)
        let begins = tasks.log.filter { $0.hasPrefix("begin") }.count
        let ends = tasks.log.filter { $0.hasPrefix("end") }.count
        #expect(begins == ends)
        #expect(begins >= 1)
    }

    @Test func anEndedRunBelowZeroIsIgnored() {
        let tasks = RecordingTasks()
        let assertion = BackgroundRunAssertion(tasks: tasks)
        assertion.runEnded()
        #expect(assertion.runsInFlight == 0)
        assertion.runStarted()
        #expect(assertion.isHeld)
        assertion.runEnded()
        #expect(tasks.log == ["begin 1", "end 1"])
    }

    @Test func withoutUIKitThereIsNoAssertionToHold() {
        #if !os(iOS) && !os(tvOS) && !os(visionOS)
        let assertion = BackgroundRunAssertion(tasks: SystemBackgroundTasks())
        assertion.runStarted()
        #expect(!assertion.isHeld)
        assertion.runEnded()
        #expect(assertion.runsInFlight == 0)
        #endif
    }

    @Test func whoWatchesForExpiryIsToldWhenTheSystemTakesTheTimeBackNotWhenTheLastRunEnds() {
        let tasks = RecordingTasks()
        let assertion = BackgroundRunAssertion(tasks: tasks)
        let told = EventLog()
        var observation: BackgroundRunAssertion.ExpiryObservation? = assertion.whenExpired { told.add("expired") }
        assertion.runStarted()
        assertion.runEnded()
        #expect(told.events.isEmpty)
        assertion.runStarted()
        tasks.expire(2)
        #expect(told.events == ["expired"])
        #expect(!assertion.isHeld)
        assertion.runEnded()
        observation = nil
        assertion.runStarted()
        tasks.expire(3)
        #expect(told.events == ["expired"])
        withExtendedLifetime(observation) {}
    }
}

/// The system's background-task identifiers by token, whichever of `begin`'s UIKit call and
/// `end` reaches the main thread first.
@Suite("Background task ledger")
struct BackgroundTaskLedgerTests {
    @Test func aTaskBegunThenEndedIsEndedOnceAndForgotten() {
        let ledger = BackgroundTaskLedger()
        let token = ledger.newToken()
        #expect(ledger.keep(41, for: token))
        #expect(ledger.take(token) == 41)
        #expect(ledger.take(token) == nil)
        #expect(ledger.count == 0)
    }

    @Test func aTaskEndedBeforeTheSystemBeganItIsEndedAsItBegins() {
        let ledger = BackgroundTaskLedger()
        let token = ledger.newToken()
        #expect(ledger.take(token) == nil)
        #expect(!ledger.keep(42, for: token))
        #expect(ledger.take(token) == nil)
        #expect(ledger.count == 0)
    }

    @Test func aTaskTheSystemTookBackLeavesNothingForItsOwnersEnd() {
        let ledger = BackgroundTaskLedger()
        let token = ledger.newToken()
        #expect(ledger.keep(43, for: token))
        // The expiration handler takes it first; the owner's end then finds nothing.
        #expect(ledger.take(token) == 43)
        #expect(ledger.take(token) == nil)
        let refused = ledger.newToken()
        ledger.forget(refused)
        #expect(ledger.take(refused) == nil)
        #expect(ledger.count == 0)
    }
}
