import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Something a test delivery holds, counting its releases.
private final class CountedHold: AttemptHold {
    let releases = Locked(0)
    func release() { releases.withLock { $0 += 1 } }
}

/// A delivery that breaks the machine's rules on purpose: it holds something while the request
/// is built and again after the exchange (an attempt holds one thing at most), or moves the
/// machine on itself during the exchange, so that the runner's own step is out of turn.
private struct RuleBreakingDelivery: ResponseDelivery {
    enum Fault: Sendable { case holdsTwice, movesTheMachine }
    let fault: Fault
    let first = CountedHold()
    let second = CountedHold()

    var keepsBodyInMemory: Bool { true }

    @ConveyActor
    func prepare(_ request: inout OutgoingRequest) throws -> (any AttemptHold)? {
        fault == .holdsTwice ? first : nil
    }

    func exchange(_ hop: Hop, through chain: ExchangeChain, attempt: AttemptContext,
                  holding hold: (any AttemptHold)?) async throws -> (Exchange, (any AttemptHold)?) {
        let body = InMemoryBody(limit: nil, url: hop.request.url)
        let sent = try await chain.send(hop, into: body, attempt: attempt)
        let (head, data) = try body.collected()
        let exchange = Exchange(request: sent.request, head: head, body: data, metrics: sent.metrics)
        switch fault {
        case .holdsTwice:
            return (exchange, second)
        case .movesTheMachine:
            _ = attempt.cancellation.run?.step { $0.responseReceived() }
            return (exchange, nil)
        }
    }

    func payload(from exchange: Exchange, holding hold: (any AttemptHold)?, plan: RunPlan, deadline: RunDeadline?) async throws -> Data {
        exchange.body
    }

    func payload(answering exchange: Exchange, plan: RunPlan, deadline: RunDeadline?) async throws -> Data { exchange.body }
}

/// A task that would retry any failure, counting how often it was asked.
private struct EagerTask: DownloadingTask {
    let server: ConveyServer
    let asked = Locked(0)
    var path: String { "defect" }

    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? {
        asked.withLock { $0 += 1 }
        return 0
    }
}

/// An illegal transition of the run's machine is a defect in Convey: on every path it ends the run
/// with the defect, never retried, and is reported (a debug build stops on it; these tests take
/// the report instead).
@Suite("Lifecycle: defects")
@ConveyActor
struct DefectTests {
    let reports = EventLog()

    private func run(_ fault: RuleBreakingDelivery.Fault) async throws -> (error: (any Error)?, task: EagerTask, delivery: RuleBreakingDelivery, sent: Int) {
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen)) { $0.retryWaiter = RecordingRetryWaiter() }
        let task = EagerTask(server: server)
        let delivery = RuleBreakingDelivery(fault: fault)
        let error = await Defects.$handler.withValue({ [reports] in reports.add($0) }) {
            await Task { try await TaskRunner(task: task).run(delivery) }.result.failure
        }
        return (error, task, delivery, seen.requests.count)
    }

    @Test func aSecondHoldRefusedEndsTheRunWithTheDefectNotATransportError() async throws {
        let outcome = try await run(.holdsTwice)
        let illegal = try #require(outcome.error as? RunStateMachine.IllegalTransition)
        #expect(illegal.event == .holding)
        #expect(outcome.task.asked.value == 0)
        #expect(outcome.sent == 1)
        #expect(reports.events == [illegal.description])
        #expect(outcome.delivery.first.releases.value == 1)
        #expect(outcome.delivery.second.releases.value == 1)
    }

    @Test func aStepOutOfTurnEndsTheRunWithTheDefectAndIsNotRetried() async throws {
        let outcome = try await run(.movesTheMachine)
        let illegal = try #require(outcome.error as? RunStateMachine.IllegalTransition)
        #expect(illegal.event == .responseReceived)
        #expect(outcome.task.asked.value == 0)
        #expect(outcome.sent == 1)
        #expect(reports.events == [illegal.description])
    }

    @Test func aRefusedRetryWaitIsTheRunsOutcomeNotAFreshAttempt() async {
        let run = ActiveRun(tag: nil, taskType: EagerTask.self, totalTimeout: nil, clock: ContinuousRunClock.shared)
        let waiter = RecordingRetryWaiter()
        let action = await run.waitToRetry(.seconds(1), using: waiter)
        let illegal = action.failure as? RunStateMachine.IllegalTransition
        #expect(illegal == RunStateMachine.IllegalTransition(event: .retryWaitStarting, phase: .idle))
        #expect(waiter.milliseconds.isEmpty)
    }
}
