import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Every event in every state: the legal ones move the machine, the others are rejected without
/// a crash, leave the state and what it owns as they were, and fail the step with `IllegalTransition`.
@Suite("Lifecycle: run state machine transitions")
struct LifecycleRunStateMachineTransitionTests {
    typealias Machine = RunStateMachine
    typealias Event = RunStateMachine.Event

    /// The states a run can be in, each reached through legal events.
    enum Where: String, CaseIterable, Sendable {
        case idle, building, exchanging, receiving, refreshingCredentials, retryScheduled, waitingToRetry, finished
    }

    /// The events each state allows.
    static let legal: [Where: Set<Event>] = [
        .idle: [.attemptStarting],
        .building: [.holding, .exchangeStarting, .attemptFailed],
        .exchanging: [.holding, .responseReceived, .attemptFailed],
        .receiving: [.holding, .payloadReady, .attemptFailed],
        .refreshingCredentials: [.credentialRefreshEnded],
        .retryScheduled: [.retryWaitStarting, .retryWaitEnded],
        .waitingToRetry: [.retryWaitEnded],
        .finished: [.sendingAgain],
    ]

    static let illegal: [(Where, Event)] = Where.allCases.flatMap { place in
        Event.allCases.filter { !(legal[place] ?? []).contains($0) }.map { (place, $0) }
    }
    static let allowed: [(Where, Event)] = Where.allCases.flatMap { place in
        Event.allCases.filter { (legal[place] ?? []).contains($0) }.map { (place, $0) }
    }

    let start = ContinuousClock.now
    let owned = Work()

    /// A machine in `place`, reached through legal events; what it owns there is `owned`.
    func machine(in place: Where) -> Machine {
        var machine = Machine(totalTimeout: nil, startingAt: start)
        let noRetry: (any Error, Int) -> TimeInterval? = { _, _ in nil }
        let retryAfterOneSecond: (any Error, Int) -> TimeInterval? = { _, _ in 1 }
        if place == .idle { return machine }
        _ = machine.attemptStarting(at: start)
        switch place {
        case .idle, .building: break
        case .exchanging:
            _ = machine.exchangeStarting(url: nil) { owned }
        case .receiving:
            _ = machine.exchangeStarting(url: nil) { Work() }
            _ = machine.responseReceived()
        case .refreshingCredentials:
            _ = machine.attemptFailed(HTTPError(statusCode: 401), at: start, retryInterval: noRetry)
        case .retryScheduled:
            _ = machine.attemptFailed(HTTPError(statusCode: 503), at: start, retryInterval: retryAfterOneSecond)
        case .waitingToRetry:
            _ = machine.attemptFailed(HTTPError(statusCode: 503), at: start, retryInterval: retryAfterOneSecond)
            _ = machine.retryWaitStarting { owned }
        case .finished:
            _ = machine.attemptFailed(HTTPError(statusCode: 503), at: start, retryInterval: noRetry)
        }
        #expect(machine.rejections.isEmpty)
        return machine
    }

    /// Sends `event` to `machine` and returns the error its action fails with, if any.
    /// `launched` records whether the machine launched work for it.
    func send(_ event: Event, to machine: inout Machine, launched: inout Bool) -> (any Error)? {
        let retry: (any Error, Int) -> TimeInterval? = { _, _ in 1 }
        let now = start + .seconds(1)
        switch event {
        case .attemptStarting: return machine.attemptStarting(at: now).failure
        case .holding: return machine.holding(Held()).failure
        case .exchangeStarting: return machine.exchangeStarting(url: nil) { launched = true; return Work() }.failure
        case .responseReceived: return machine.responseReceived().failure
        case .payloadReady: return machine.payloadReady().failure
        case .attemptFailed: return machine.attemptFailed(HTTPError(statusCode: 503), at: now, retryInterval: retry).failure
        case .credentialRefreshEnded: return machine.credentialRefreshEnded(refreshed: false, at: now).failure
        case .retryWaitStarting: return machine.retryWaitStarting { launched = true; return Work() }.failure
        case .retryWaitEnded: return machine.retryWaitEnded(at: now).failure
        case .sendingAgain: return machine.sendingAgain(stopped: nil).failure
        }
    }

    @Test(arguments: illegal)
    func anIllegalEventIsRejectedAndLeavesTheMachineAsItWas(place: Where, event: Event) {
        var machine = machine(in: place)
        let phase = machine.phase
        let attemptNumber = machine.attemptNumber
        var launched = false
        let error = send(event, to: &machine, launched: &launched)
        let rejection = Machine.IllegalTransition(event: event, phase: phase)
        #expect(error as? Machine.IllegalTransition == rejection)
        #expect("\(rejection)".contains(event.rawValue))
        #expect(machine.rejections == [rejection])
        #expect(machine.phase == phase)
        #expect(machine.attemptNumber == attemptNumber)
        #expect(machine.stop == nil)
        #expect(!launched)
        // What the state owns is still what a stop cancels.
        let stop = machine.cancel()
        switch place {
        case .exchanging, .waitingToRetry: #expect(stop.cancels(owned))
        case .idle, .building, .receiving, .refreshingCredentials, .retryScheduled, .finished: #expect(stop.isNone)
        }
        #expect(machine.stop == (place == .finished ? nil : .cancelled))
    }

    @Test(arguments: allowed)
    func aLegalEventIsNotRejected(place: Where, event: Event) {
        var machine = machine(in: place)
        var launched = false
        let error = send(event, to: &machine, launched: &launched)
        #expect(!(error is Machine.IllegalTransition))
        #expect(machine.rejections.isEmpty)
        #expect(launched == (event == .exchangeStarting || event == .retryWaitStarting))
    }

    @Test func aSecondPayloadReadyIsRejectedAndTheRunStaysASuccess() {
        var machine = machine(in: .receiving)
        #expect(machine.payloadReady().failure == nil)
        #expect(machine.payloadReady().failure as? Machine.IllegalTransition == .init(event: .payloadReady, phase: .finished))
        #expect(machine.isFinished)
        #expect(machine.cancel().isNone)
        #expect(machine.stop == nil)
    }

    @Test func aStoppedRunLaunchesNoExchangeNorWait() {
        var building = machine(in: .building)
        _ = building.cancel()
        var launched = false
        #expect(isCancelled(building.exchangeStarting(url: nil) { launched = true; return Work() }.failure))
        #expect(building.phase == .building)

        var scheduled = machine(in: .retryScheduled)
        _ = scheduled.cancel()
        #expect(isCancelled(scheduled.retryWaitStarting { launched = true; return Work() }.failure))
        #expect(isCancelled(scheduled.retryWaitEnded(at: start).failure))
        #expect(scheduled.isFinished)
        #expect(!launched)
    }
}
