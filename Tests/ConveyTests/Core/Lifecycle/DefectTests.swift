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

/// A delivery that holds something while the request is built, counting its releases.
private struct HoldingDelivery: ResponseDelivery {
    let first = CountedHold()

    var keepsBodyInMemory: Bool { true }

    @ConveyActor
    func prepare(_ request: inout OutgoingRequest) throws -> (any AttemptHold)? { first }

    func stage(_ exchange: inout Exchange, holding hold: (any AttemptHold)?, plan: RunPlan) async throws -> Data { exchange.data }

    func payload(_ exchange: Exchange, staged: Data?, holding hold: (any AttemptHold)?, plan: RunPlan, deadline: RunDeadline?) async throws -> Data {
        staged ?? exchange.data
    }
}

/// A step that breaks the machine's rules on purpose, during the exchange: it makes the attempt
/// hold a second thing (an attempt holds one thing at most), or moves the machine on itself, so
/// that the runner's own step is out of turn.
private struct RuleBreakingStep: ChainStep {
    enum Fault: Sendable { case holdsTwice, movesTheMachine }
    let fault: Fault
    let second: CountedHold

    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        let exchange = try await next(request, context)
        switch fault {
        case .holdsTwice:
            if case .fail(let error, _) = context.run.step({ $0.holding(second) }) {
                second.release()
                throw error
            }
        case .movesTheMachine:
            _ = context.run.step { $0.responseReceived() }
        }
        return exchange
    }
}

/// A step around the run that sends the request again after any failure.
private struct SendingAgainAfterAnyFailure: Interceptor {
    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        do {
            return try await next(request)
        } catch {
            return try await next(request)
        }
    }
}

/// The chain of these tests: a step around the run when asked, the run, the rule-breaking step,
/// the transport.
private enum RuleBreakingChain: ChainMaking {
    @TaskLocal static var step: RuleBreakingStep?
    @TaskLocal static var around: (any Interceptor)?

    @ConveyActor
    static func chain<Task: DownloadingTask>(for task: Task, plan: RunPlan, start: RunStart, run: any ChainStep) -> Chain {
        Chain(steps: (around.map { [AppStep(interceptor: $0)] } ?? []) + [run] + (step.map { [$0] } ?? []) + [TransportStep()], observers: [])
    }
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

    private func run(_ fault: RuleBreakingStep.Fault, around: (any Interceptor)? = nil) async throws
        -> (error: (any Error)?, task: EagerTask, first: CountedHold, second: CountedHold, sent: Int) {
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen)) { $0.retryWaiter = RecordingRetryWaiter() }
        let task = EagerTask(server: server)
        let delivery = HoldingDelivery()
        let step = RuleBreakingStep(fault: fault, second: CountedHold())
        let error = await Defects.$handler.withValue({ [reports] in reports.add($0) }) {
            await RuleBreakingChain.$around.withValue(around) {
                await RuleBreakingChain.$step.withValue(step) {
                    await Task { try await TaskRunner(task: task, chain: RuleBreakingChain.self).run(delivery).payload }.result.failure
                }
            }
        }
        return (error, task, delivery.first, step.second, seen.requests.count)
    }

    @Test func aSecondHoldRefusedEndsTheRunWithTheDefectNotATransportError() async throws {
        let outcome = try await run(.holdsTwice)
        let illegal = try #require(outcome.error as? RunStateMachine.IllegalTransition)
        #expect(illegal.event == .holding)
        #expect(outcome.task.asked.value == 0)
        #expect(outcome.sent == 1)
        #expect(reports.events == [illegal.description])
        #expect(outcome.first.releases.value == 1)
        #expect(outcome.second.releases.value == 1)
    }

    @Test func aStepOutOfTurnEndsTheRunWithTheDefectAndIsNotRetried() async throws {
        let outcome = try await run(.movesTheMachine)
        let illegal = try #require(outcome.error as? RunStateMachine.IllegalTransition)
        #expect(illegal.event == .responseReceived)
        #expect(outcome.task.asked.value == 0)
        #expect(outcome.sent == 1)
        #expect(reports.events == [illegal.description])
    }

    /// A step around the run that sends the request again after a failure never runs a run that
    /// a defect ended: the defect stays the run's outcome, and nothing more is sent.
    @Test func aDefectIsNeverSentAgainByAStepAroundTheRun() async throws {
        let outcome = try await run(.movesTheMachine, around: SendingAgainAfterAnyFailure())
        let illegal = try #require(outcome.error as? RunStateMachine.IllegalTransition)
        #expect(illegal.event == .responseReceived)
        #expect(outcome.task.asked.value == 0)
        #expect(outcome.sent == 1)
        #expect(reports.events == [illegal.description])
    }

    @Test func aRefusedRetryWaitIsTheRunsOutcomeNotAFreshAttempt() async throws {
        let task = EagerTask(server: try stubServer(.answering()))
        let plan = RunPlan(task: task, start: RunStart(), deliveryTimeout: nil, keepsBodyInMemory: true, bufferSize: 1)
        let run = ActiveRun(plan: plan, taskType: EagerTask.self, chain: Chain(steps: [], observers: []), observers: .none, start: RunStart())
        let waiter = RecordingRetryWaiter()
        let action = await run.waitToRetry(.seconds(1), using: waiter)
        let illegal = action.failure as? RunStateMachine.IllegalTransition
        #expect(illegal == RunStateMachine.IllegalTransition(event: .retryWaitStarting, phase: .idle))
        #expect(waiter.milliseconds.isEmpty)
    }
}
