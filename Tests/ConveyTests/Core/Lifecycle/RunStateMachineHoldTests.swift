import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// What an attempt holds (`holding`: a claimed partial file while the request is built, a stream's
/// transfer once the head arrived) belongs to that attempt alone: the machine hands it back when
/// the run succeeds, names it for the runner to let go whichever way the attempt fails, never lets
/// it go itself, and starts every next attempt holding nothing.
@Suite("Lifecycle: what an attempt holds")
struct RunStateMachineHoldTests {
    typealias Machine = RunStateMachine

    /// Where the attempt took its hold.
    enum HeldFrom: String, CaseIterable, Sendable {
        case building, exchanging, receiving
    }

    /// How the attempt ended.
    enum Ending: String, CaseIterable, Sendable {
        /// A 503 the retry rule answers with a wait.
        case retried
        /// A first 401: the server's credential refresh comes next.
        case refreshingCredentials
        /// A 503 the retry rule gives up on.
        case givenUp
        /// The caller's task was cancelled: the attempt fails with a cancellation.
        case cancellationError
        /// Cancelled by tag or type, then the attempt failed.
        case stopped
        /// The total timeout passed, then the attempt failed.
        case deadlinePassed
        /// Stopped while receiving, then the payload was ready all the same.
        case stoppedWithThePayloadReady
    }

    let start = ContinuousClock.now

    /// A machine whose first attempt took `held` in `phase`.
    func machine(holding held: Held, from phase: HeldFrom) -> Machine {
        var machine = Machine(totalTimeout: .seconds(10), startingAt: start)
        #expect(machine.attemptStarting(at: start).failure == nil)
        if phase == .building { #expect(machine.holding(held).failure == nil) }
        if phase != .building {
            #expect(machine.exchangeStarting(url: nil) { Work() }.failure == nil)
            if phase == .exchanging { #expect(machine.holding(held).failure == nil) }
        }
        if phase == .receiving {
            #expect(machine.responseReceived().failure == nil)
            #expect(machine.holding(held).failure == nil)
        }
        return machine
    }

    @Test(arguments: HeldFrom.allCases)
    func whatTheAttemptHeldIsHandedBackWhenTheRunSucceeds(from phase: HeldFrom) {
        let held = Held()
        var machine = machine(holding: held, from: phase)
        if phase == .building { #expect(machine.exchangeStarting(url: nil) { Work() }.failure == nil) }
        if phase != .receiving { #expect(machine.responseReceived().failure == nil) }
        let action = machine.payloadReady()
        guard case .succeed(let kept) = action else { Issue.record("expected success, got \(action)"); return }
        #expect((kept as? Held) === held)
        #expect(action.released == nil)
        #expect(!held.released, "the machine hands the hold back; letting it go is not its part")
        #expect(machine.isFinished)
        #expect(machine.rejections.isEmpty)
    }

    @Test(arguments: HeldFrom.allCases, Ending.allCases)
    func whatTheAttemptHeldIsNamedForReleaseHoweverTheAttemptEnds(from phase: HeldFrom, ending: Ending) {
        let held = Held()
        var machine = machine(holding: held, from: phase)
        let now = start + .seconds(1)
        let retryOnce: (any Error, Int) -> TimeInterval? = { _, _ in 1 }
        let giveUp: (any Error, Int) -> TimeInterval? = { _, _ in nil }
        let action: Machine.RunAction
        switch ending {
        case .retried:
            action = machine.attemptFailed(HTTPError(statusCode: 503), at: now, retryInterval: retryOnce)
            #expect(action.wait == .seconds(1))
        case .refreshingCredentials:
            action = machine.attemptFailed(HTTPError(statusCode: 401), at: now, retryInterval: retryOnce)
            guard case .refreshCredentials = action else { Issue.record("expected a refresh, got \(action)"); return }
        case .givenUp:
            action = machine.attemptFailed(HTTPError(statusCode: 503), at: now, retryInterval: giveUp)
            #expect((action.failure as? HTTPError)?.statusCode == 503)
        case .cancellationError:
            action = machine.attemptFailed(CancellationError(), at: now, retryInterval: retryOnce)
            #expect(isCancelled(action.failure))
        case .stopped:
            _ = machine.cancel()
            action = machine.attemptFailed(URLError(.cancelled), at: now, retryInterval: retryOnce)
            #expect(isCancelled(action.failure))
        case .deadlinePassed:
            _ = machine.deadlinePassed(at: start + .seconds(10))
            action = machine.attemptFailed(URLError(.cancelled), at: start + .seconds(10), retryInterval: retryOnce)
            #expect(totalTimeout(action.failure) != nil)
        case .stoppedWithThePayloadReady:
            if phase == .building { #expect(machine.exchangeStarting(url: nil) { Work() }.failure == nil) }
            if phase != .receiving { #expect(machine.responseReceived().failure == nil) }
            _ = machine.cancel()
            action = machine.payloadReady()
            #expect(isCancelled(action.failure))
        }
        #expect((action.released as? Held) === held)
        #expect(!held.released, "the runner lets go of the hold the action names")
        #expect(machine.rejections.isEmpty)
    }

    @Test(arguments: [false, true])
    func theNextAttemptStartsHoldingNothing(afterARefresh: Bool) {
        let held = Held()
        var machine = machine(holding: held, from: .building)
        let now = start + .seconds(1)
        if afterARefresh {
            _ = machine.attemptFailed(HTTPError(statusCode: 401), at: now, retryInterval: { _, _ in nil })
            guard case .startAttempt = machine.credentialRefreshEnded(refreshed: true, at: now) else { Issue.record("expected a retry"); return }
        } else {
            _ = machine.attemptFailed(HTTPError(statusCode: 503), at: now, retryInterval: { _, _ in 0 })
            #expect(machine.retryWaitStarting { Work() }.failure == nil)
            guard case .startAttempt = machine.retryWaitEnded(at: now) else { Issue.record("expected a retry"); return }
        }
        #expect(machine.attemptNumber == 2)
        #expect(machine.attemptStarting(at: now).failure == nil)
        #expect(machine.exchangeStarting(url: nil) { Work() }.failure == nil)
        #expect(machine.responseReceived().failure == nil)
        guard case .succeed(let kept) = machine.payloadReady() else { Issue.record("expected success"); return }
        #expect(kept == nil, "the first attempt's hold was named for release, never kept for the second")
    }

    /// The states where no attempt is in progress, each reached through legal events.
    enum Between: String, CaseIterable, Sendable {
        case idle, refreshingCredentials, retryScheduled, waitingToRetry
    }

    @Test(arguments: Between.allCases)
    func aHoldOfferedBetweenAttemptsIsRejectedAndNeverHandedBack(state: Between) {
        var machine = Machine(totalTimeout: nil, startingAt: start)
        if state != .idle {
            #expect(machine.attemptStarting(at: start).failure == nil)
            let status = state == .refreshingCredentials ? 401 : 503
            _ = machine.attemptFailed(HTTPError(statusCode: status), at: start, retryInterval: { _, _ in 0 })
        }
        if state == .waitingToRetry { #expect(machine.retryWaitStarting { Work() }.failure == nil) }
        let phase = machine.phase
        let stray = Held()
        #expect(machine.holding(stray).failure as? Machine.IllegalTransition == .init(event: .holding, phase: phase))
        // The run goes on to a next attempt that succeeds: the stray hold is nowhere in it.
        switch state {
        case .idle: break
        case .refreshingCredentials: #expect(machine.credentialRefreshEnded(refreshed: true, at: start).failure == nil)
        case .retryScheduled, .waitingToRetry: #expect(machine.retryWaitEnded(at: start).failure == nil)
        }
        #expect(machine.attemptStarting(at: start).failure == nil)
        #expect(machine.exchangeStarting(url: nil) { Work() }.failure == nil)
        #expect(machine.responseReceived().failure == nil)
        guard case .succeed(let kept) = machine.payloadReady() else { Issue.record("expected success"); return }
        #expect(kept == nil)
        #expect(!stray.released)
        #expect(machine.rejections == [.init(event: .holding, phase: phase)])
    }

    @Test func aHoldOfferedOnceTheRunFinishedIsRejected() {
        let held = Held()
        var machine = machine(holding: held, from: .receiving)
        guard case .succeed = machine.payloadReady() else { Issue.record("expected success"); return }
        let late = Held()
        #expect(machine.holding(late).failure as? Machine.IllegalTransition == .init(event: .holding, phase: .finished))
        #expect(machine.isFinished)
        #expect(!late.released && !held.released)
    }
}

extension RunStateMachineHoldTests.HeldFrom: CustomTestStringConvertible {
    var testDescription: String { "held from \(rawValue)" }
}

extension RunStateMachineHoldTests.Ending: CustomTestStringConvertible {
    var testDescription: String { rawValue }
}
