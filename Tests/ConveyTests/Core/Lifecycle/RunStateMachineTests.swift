import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The run's state machine on its own: every rule about time uses instants the test picks, so
/// nothing here sleeps or depends on how fast the machine is.
@Suite("Lifecycle: run state machine")
struct LifecycleRunStateMachineTests {
    typealias Machine = RunStateMachine
    typealias Instant = ContinuousClock.Instant

    let start = ContinuousClock.now
    let url = URL(string: "https://stub.example/users/1")
    let unavailable = HTTPError(statusCode: 503)
    let unauthorized = HTTPError(statusCode: 401)

    /// A machine with a 10 s total timeout, started at `start`.
    func machine(totalTimeout: Duration? = .seconds(10)) -> Machine {
        Machine(totalTimeout: totalTimeout, startingAt: start)
    }

    func at(_ offset: Duration) -> Instant { start + offset }

    /// A retry rule that always asks for `seconds` and records what it was asked.
    final class RetryRule: @unchecked Sendable {
        let seconds: TimeInterval?
        private(set) var asked: [String] = []
        init(_ seconds: TimeInterval?) { self.seconds = seconds }
        func interval(_ error: any Error, _ count: Int) -> TimeInterval? {
            asked.append("\((error as? HTTPError)?.statusCode ?? 0) #\(count)")
            return seconds
        }
    }

    /// The exchange the machine launched in `exchanging()`.
    let exchange = Work()
    /// The wait the machine launched in `waitingToRetry()`.
    let wait = Work()

    /// A machine whose first attempt is exchanging `exchange`.
    func exchanging(totalTimeout: Duration? = .seconds(10)) -> Machine {
        var machine = machine(totalTimeout: totalTimeout)
        #expect(machine.attemptStarting(at: at(.zero)).failure == nil)
        #expect(machine.exchangeStarting(url: url) { exchange }.failure == nil)
        #expect(machine.phase == .exchanging)
        return machine
    }

    /// A machine whose first attempt failed with a 503 and waits 2 s, with `wait`, to retry.
    func waitingToRetry() -> Machine {
        var machine = exchanging()
        let action = machine.attemptFailed(unavailable, at: at(.seconds(1)), retryInterval: RetryRule(2).interval)
        #expect(action.wait == .seconds(2))
        #expect(machine.phase == .retryScheduled(until: at(.seconds(3))))
        #expect(machine.retryWaitStarting { wait }.failure == nil)
        return machine
    }

    // MARK: - Cancel in each state

    @Test func cancelWhileBuildingEndsTheRunAtItsNextStep() {
        var machine = machine()
        #expect(machine.attemptStarting(at: at(.zero)).failure == nil)
        #expect(machine.cancel().isNone)
        #expect(machine.phase == .building)
        #expect(isCancelled(machine.exchangeStarting(url: url) { Work() }.failure))
        #expect(isCancelled(machine.attemptFailed(ConveyError.cancelled, at: at(.zero), retryInterval: RetryRule(0).interval).failure))
        #expect(machine.isFinished)
    }

    @Test func cancelWhileExchangingCancelsTheExchange() {
        var machine = exchanging()
        #expect(machine.cancel().cancels(exchange))
        #expect(machine.stop == .cancelled)
        // The transport reports its cancellation as a failed attempt; the run is not retried.
        let rule = RetryRule(0)
        let action = machine.attemptFailed(URLError(.cancelled), at: at(.seconds(1)), retryInterval: rule.interval)
        #expect(isCancelled(action.failure))
        #expect(rule.asked.isEmpty)
        #expect(machine.isFinished)
    }

    @Test func cancelWhileReceivingEndsTheRunWhenThePayloadIsReady() {
        var machine = exchanging()
        #expect(machine.responseReceived().failure == nil)
        #expect(machine.phase == .receiving)
        #expect(machine.cancel().isNone)
        #expect(isCancelled(machine.payloadReady().failure))
    }

    @Test func cancelWhileWaitingForACredentialRefreshEndsTheRunWhenTheRefreshEnds() {
        var machine = exchanging()
        guard case .refreshCredentials(let error, _) = machine.attemptFailed(unauthorized, at: at(.seconds(1)), retryInterval: RetryRule(0).interval) else {
            Issue.record("expected a credential refresh"); return
        }
        #expect(error.statusCode == 401)
        #expect(machine.phase == .refreshingCredentials)
        // The refresh is shared with other runs: nothing to interrupt.
        #expect(machine.cancel().isNone)
        let action = machine.credentialRefreshEnded(refreshed: true, at: at(.seconds(2)))
        #expect(isCancelled(action.failure))
        #expect(machine.attemptNumber == 1)
    }

    @Test func cancelWhileWaitingToRetryCancelsTheWait() {
        var machine = waitingToRetry()
        #expect(machine.phase == .waitingToRetry(until: at(.seconds(3))))
        #expect(machine.cancel().cancels(wait))
        #expect(isCancelled(machine.retryWaitEnded(at: at(.seconds(1.5))).failure))
        #expect(machine.attemptNumber == 1)
    }

    @Test func cancelAfterTheRunFinishedChangesNothing() {
        var machine = exchanging()
        #expect(machine.responseReceived().failure == nil)
        #expect(machine.payloadReady().failure == nil)
        #expect(machine.isFinished)
        #expect(machine.cancel().isNone)
        #expect(machine.deadlinePassed(at: at(.seconds(60))).isNone)
        #expect(machine.stop == nil)
    }

    // MARK: - Deadline in each state

    @Test func deadlineWhileBuildingEndsTheRunAsATotalTimeout() {
        var machine = machine()
        #expect(machine.attemptStarting(at: at(.zero)).failure == nil)
        #expect(machine.deadlinePassed(at: at(.seconds(10))).isNone)
        let failure = totalTimeout(machine.exchangeStarting(url: url) { Work() }.failure)
        #expect(failure?.limit == .seconds(10))
        #expect(failure?.url == url)
    }

    @Test func deadlineWhileExchangingCancelsTheExchangeAndReportsATotalTimeout() {
        var machine = exchanging()
        #expect(machine.deadlinePassed(at: at(.seconds(10))).cancels(exchange))
        #expect(machine.stop == .deadlinePassed)
        let action = machine.attemptFailed(ConveyError.cancelled, at: at(.seconds(10)), retryInterval: RetryRule(0).interval)
        #expect(totalTimeout(action.failure)?.limit == .seconds(10))
    }

    @Test func deadlineWhileReceivingFailsTheRunWhenThePayloadIsReady() {
        var machine = exchanging()
        #expect(machine.responseReceived().failure == nil)
        #expect(machine.deadlinePassed(at: at(.seconds(11))).isNone)
        #expect(totalTimeout(machine.payloadReady().failure) != nil)
    }

    @Test func deadlineWhileWaitingForACredentialRefreshFailsTheRunWhenTheRefreshEnds() {
        var machine = exchanging()
        _ = machine.attemptFailed(unauthorized, at: at(.seconds(1)), retryInterval: RetryRule(0).interval)
        #expect(machine.deadlinePassed(at: at(.seconds(10))).isNone)
        let action = machine.credentialRefreshEnded(refreshed: true, at: at(.seconds(12)))
        #expect(totalTimeout(action.failure) != nil)
    }

    @Test func deadlineWhileWaitingToRetryCancelsTheWait() {
        var machine = waitingToRetry()
        #expect(machine.deadlinePassed(at: at(.seconds(10))).cancels(wait))
        #expect(totalTimeout(machine.retryWaitEnded(at: at(.seconds(10))).failure) != nil)
    }

    @Test func anAlarmBeforeTheDeadlineIsIgnored() {
        var machine = exchanging()
        #expect(machine.deadlinePassed(at: at(.milliseconds(9_999))).isNone)
        #expect(machine.stop == nil)
        #expect(machine.responseReceived().failure == nil)
    }

    @Test func aRunWithoutTotalTimeoutHasNoDeadline() {
        var machine = exchanging(totalTimeout: nil)
        #expect(machine.deadline == nil)
        #expect(machine.deadlinePassed(at: at(.seconds(1_000_000))).isNone)
        #expect(machine.responseReceived().failure == nil)
    }

    @Test func noAttemptStartsOnceTheDeadlineHasPassedEvenBeforeTheAlarmRings() {
        var machine = machine()
        #expect(totalTimeout(machine.attemptStarting(at: at(.seconds(10))).failure) != nil)
    }

    // MARK: - Races

    @Test func aResponseArrivingAfterACancelStillEndsTheRunCancelled() {
        var machine = exchanging()
        #expect(machine.cancel().cancels(exchange))
        // The transport had the response before it saw the cancellation.
        #expect(isCancelled(machine.responseReceived().failure))
        #expect(isCancelled(machine.attemptFailed(ConveyError.cancelled, at: at(.seconds(1)), retryInterval: RetryRule(0).interval).failure))
    }

    @Test func aCancelArrivingAfterTheResponseStillEndsTheRunCancelled() {
        var machine = exchanging()
        #expect(machine.responseReceived().failure == nil)
        #expect(machine.cancel().isNone)
        #expect(isCancelled(machine.payloadReady().failure))
    }

    @Test func aCancelArrivingAfterTheRunFinishedLeavesItsSuccess() {
        var machine = exchanging()
        #expect(machine.responseReceived().failure == nil)
        #expect(machine.payloadReady().failure == nil)
        #expect(machine.cancel().isNone)
        #expect(machine.phase == .finished)
        #expect(machine.stop == nil)
    }

    @Test func aFailureArrivingAfterTheDeadlineReportsTheTimeoutNotTheFailure() {
        var machine = exchanging()
        #expect(machine.deadlinePassed(at: at(.seconds(10))).cancels(exchange))
        let rule = RetryRule(0)
        let action = machine.attemptFailed(unavailable, at: at(.seconds(10)), retryInterval: rule.interval)
        #expect(totalTimeout(action.failure) != nil)
        #expect(rule.asked.isEmpty)
    }

    @Test func theFirstStopDecidesTheError() {
        var cancelledFirst = exchanging()
        #expect(cancelledFirst.cancel().cancels(exchange))
        _ = cancelledFirst.deadlinePassed(at: at(.seconds(10)))
        #expect(isCancelled(cancelledFirst.responseReceived().failure))

        var timedOutFirst = exchanging()
        _ = timedOutFirst.deadlinePassed(at: at(.seconds(10)))
        _ = timedOutFirst.cancel()
        #expect(totalTimeout(timedOutFirst.responseReceived().failure) != nil)
    }

    // MARK: - Retry decisions near the deadline

    @Test func aWaitThatEndsBeforeTheDeadlineIsTaken() {
        var machine = exchanging()
        // Binary fractions, so the instants add up exactly.
        let action = machine.attemptFailed(unavailable, at: at(.seconds(7.5)), retryInterval: RetryRule(2.4375).interval)
        #expect(action.wait == .seconds(2.4375))
        #expect(machine.phase == .retryScheduled(until: at(.seconds(9.9375))))
        #expect(machine.retryWaitStarting { wait }.failure == nil)
        #expect(machine.phase == .waitingToRetry(until: at(.seconds(9.9375))))
        guard case .startAttempt = machine.retryWaitEnded(at: at(.seconds(9.9375))) else {
            Issue.record("expected the next attempt"); return
        }
        #expect(machine.attemptNumber == 2)
        #expect(machine.attemptStarting(at: at(.seconds(9.9375))).failure == nil)
    }

    @Test func aWaitThatWouldReachTheDeadlineEndsTheRunWithTheAttemptsError() {
        var machine = exchanging()
        let action = machine.attemptFailed(unavailable, at: at(.seconds(7)), retryInterval: RetryRule(3).interval)
        #expect((action.failure as? HTTPError)?.statusCode == 503)
        #expect(machine.isFinished)
    }

    @Test func withoutADeadlineAnyWaitIsTaken() {
        var machine = exchanging(totalTimeout: nil)
        let action = machine.attemptFailed(unavailable, at: at(.seconds(7)), retryInterval: RetryRule(86_400).interval)
        #expect(action.wait == .seconds(86_400))
    }

    @Test func noRetryIntervalEndsTheRunWithTheAttemptsError() {
        var machine = exchanging()
        let rule = RetryRule(nil)
        let action = machine.attemptFailed(unavailable, at: at(.seconds(1)), retryInterval: rule.interval)
        #expect((action.failure as? HTTPError)?.statusCode == 503)
        #expect(rule.asked == ["503 #1"])
    }

    @Test(arguments: [-5, TimeInterval.nan, TimeInterval.infinity, -TimeInterval.infinity])
    func anIntervalThatIsNotATimeIsNoWait(seconds: TimeInterval) {
        var machine = exchanging()
        #expect(machine.attemptFailed(unavailable, at: at(.seconds(1)), retryInterval: RetryRule(seconds).interval).wait == .zero)
    }

    @Test func theRetryRuleIsAskedWithEachAttemptsNumber() {
        var machine = exchanging(totalTimeout: nil)
        let rule = RetryRule(0)
        for attempt in 1...3 {
            #expect(machine.attemptFailed(unavailable, at: at(.seconds(attempt)), retryInterval: rule.interval).wait == .zero)
            guard case .startAttempt = machine.retryWaitEnded(at: at(.seconds(attempt))) else { Issue.record("expected a retry"); return }
            #expect(machine.attemptStarting(at: at(.seconds(attempt))).failure == nil)
            #expect(machine.exchangeStarting(url: url) { Work() }.failure == nil)
        }
        #expect(rule.asked == ["503 #1", "503 #2", "503 #3"])
        #expect(machine.attemptNumber == 4)
    }

    @Test func cancellationIsNeverRetriedNorAskedAbout() {
        var machine = exchanging()
        let rule = RetryRule(0)
        #expect(isCancelled(machine.attemptFailed(CancellationError(), at: at(.seconds(1)), retryInterval: rule.interval).failure))
        #expect(rule.asked.isEmpty)
    }

    // MARK: - Credential refresh

    @Test func aRefreshThatProducedCredentialsStartsTheNextAttemptAtOnce() {
        var machine = exchanging()
        let rule = RetryRule(nil)
        guard case .refreshCredentials = machine.attemptFailed(unauthorized, at: at(.seconds(1)), retryInterval: rule.interval) else {
            Issue.record("expected a credential refresh"); return
        }
        guard case .startAttempt = machine.credentialRefreshEnded(refreshed: true, at: at(.seconds(1))) else {
            Issue.record("expected the next attempt"); return
        }
        #expect(machine.attemptNumber == 2)
        #expect(rule.asked.isEmpty)
    }

    @Test func aSecondUnauthorizedAfterTheRefreshIsFinalWhateverTheRetryRuleSays() {
        var machine = exchanging()
        let rule = RetryRule(0)
        _ = machine.attemptFailed(unauthorized, at: at(.seconds(1)), retryInterval: rule.interval)
        #expect(machine.credentialRefreshEnded(refreshed: true, at: at(.seconds(1))).failure == nil)
        #expect(machine.attemptStarting(at: at(.seconds(1))).failure == nil)
        #expect(machine.exchangeStarting(url: url) { Work() }.failure == nil)
        #expect(machine.asksRetryInterval(after: unauthorized) == nil)
        #expect((machine.attemptFailed(unauthorized, at: at(.seconds(2)), retryInterval: rule.interval).failure as? HTTPError)?.statusCode == 401)
        #expect(rule.asked.isEmpty)
        #expect(machine.isFinished)
    }

    @Test func aRefreshThatFailedEndsTheRunUnauthorizedWhateverTheRetryRuleSays() {
        var machine = exchanging()
        let rule = RetryRule(1)
        _ = machine.attemptFailed(unauthorized, at: at(.seconds(1)), retryInterval: rule.interval)
        let action = machine.credentialRefreshEnded(refreshed: false, at: at(.seconds(1)))
        #expect((action.failure as? HTTPError)?.statusCode == 401)
        #expect(rule.asked.isEmpty)
        #expect(machine.isFinished)
    }

    @Test func theRetryAfterARefreshIsNotCountedInTheRetryRulesCount() {
        var machine = exchanging(totalTimeout: nil)
        let rule = RetryRule(0)
        _ = machine.attemptFailed(unauthorized, at: at(.seconds(1)), retryInterval: rule.interval)
        #expect(machine.credentialRefreshEnded(refreshed: true, at: at(.seconds(1))).failure == nil)
        #expect(machine.attemptStarting(at: at(.seconds(1))).failure == nil)
        #expect(machine.exchangeStarting(url: url) { Work() }.failure == nil)
        #expect(machine.asksRetryInterval(after: unavailable) == 1)
        #expect(machine.attemptFailed(unavailable, at: at(.seconds(2)), retryInterval: rule.interval).wait == .zero)
        #expect(rule.asked == ["503 #1"])
        #expect(machine.attemptNumber == 2)
    }

    // MARK: - What an attempt holds

    @Test func whatAFailedAttemptHeldIsLetGo() {
        var machine = exchanging()
        let held = Held()
        #expect(machine.holding(held).failure == nil)
        let action = machine.attemptFailed(unavailable, at: at(.seconds(1)), retryInterval: RetryRule(1).interval)
        #expect((action.released as? Held) === held)
    }

    @Test func whatASuccessfulAttemptHeldIsKeptForThePayload() {
        var machine = exchanging()
        let held = Held()
        #expect(machine.holding(held).failure == nil)
        #expect(machine.responseReceived().failure == nil)
        guard case .succeed(let kept) = machine.payloadReady() else { Issue.record("expected success"); return }
        #expect((kept as? Held) === held)
    }

    @Test func aSecondHoldInOneAttemptIsRefusedAndTheFirstIsKept() {
        var machine = exchanging()
        let first = Held()
        #expect(machine.holding(first).failure == nil)
        #expect(machine.holding(Held()).failure as? RunStateMachine.IllegalTransition == .init(event: .holding, phase: .exchanging))
        let action = machine.attemptFailed(unavailable, at: at(.seconds(1)), retryInterval: RetryRule(nil).interval)
        #expect((action.released as? Held) === first)
    }

    @Test func whatARunStoppedWithThePayloadInHandHeldIsLetGo() {
        var machine = exchanging()
        let held = Held()
        #expect(machine.holding(held).failure == nil)
        #expect(machine.responseReceived().failure == nil)
        #expect(machine.cancel().isNone)
        let action = machine.payloadReady()
        #expect(isCancelled(action.failure))
        #expect((action.released as? Held) === held)
    }
}

extension RunStateMachine {
    /// The exchange starts, and `launch` (the work that cancels it) is registered when it did.
    mutating func exchangeStarting(url: URL?, launch: () -> any CancellableWork) -> RunAction {
        let action = exchangeStarting(url: url)
        if case .proceed = action { _ = exchangeCancellable(by: launch()) }
        return action
    }
}

/// What a test hands the machine as an attempt's hold, to see when it is let go.
final class Held: AttemptHold, @unchecked Sendable {
    private(set) var released = false
    func release() { released = true }
}

/// Work a test hands the machine as an exchange or a retry wait, to see what a stop cancels.
final class Work: CancellableWork, @unchecked Sendable {
    private(set) var cancelled = false
    func cancel() { cancelled = true }
}

extension RunStateMachine.StopAction {
    /// Whether the action is `.none`.
    var isNone: Bool {
        if case .none = self { return true }
        return false
    }

    /// Whether the action cancels exactly `work`.
    func cancels(_ work: Work) -> Bool {
        guard case .cancel(let cancelled) = self else { return false }
        return (cancelled as? Work) === work
    }
}

/// Whether `error` is `ConveyError.cancelled`.
func isCancelled(_ error: (any Error)?) -> Bool {
    guard case .cancelled? = error as? ConveyError else { return false }
    return true
}

/// The total timeout `error` reports, if it is one.
func totalTimeout(_ error: (any Error)?) -> (limit: Duration, url: URL?, isTotal: Bool)? {
    guard let failure = (error as? ConveyError)?.timeout, failure.isTotal == true else { return nil }
    return failure
}


extension RunStateMachine.RunAction {
    /// The wait of `.waitToRetry`.
    var wait: Duration? {
        if case .waitToRetry(let duration, _) = self { return duration }
        return nil
    }
}
