import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One step of a run's chain, built in or the app's: a request in, the rest of the chain as
/// `next`, a response out. The shape of the app's `Interceptor` (which joins the chain as an
/// `AppStep`), with the run's context besides, which only Convey's own steps see.
///
/// A step may pass the request on (changed or not) and return what comes back, change that
/// response's head, wrap its body (count it, tee it, transform it, end a span when it ends: the
/// body flows up as a value), return another response, answer on its own without calling `next`,
/// or throw. What it throws reaches the steps above it, and the run, as it was thrown.
protocol ChainStep: Sendable {
    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange
}

/// A run's chain and its observers, as `ChainMaking` lists them: built once per run, on
/// `@ConveyActor`, while the run is planned.
struct Chain: Sendable {
    /// Every step, outermost first; the last is the transport's, which never calls `next`.
    let steps: [any ChainStep]
    /// Who hears the run's events (`RunObserver`): the app's, then Convey's own.
    let observers: [any RunObserver]

    /// Sends `request` through every step.
    func proceed(_ request: TransportRequest, context: StepContext) async throws -> Exchange {
        try await rest(request, context)
    }

    /// Every step, as the rest of a chain.
    var rest: ChainNext { ChainNext(steps: steps[...]) }
}

/// What makes a run's chain: the one function that lists every step in order
/// (`RunChain`, in Sources/Convey/Chain). The core knows it only through this protocol, so that
/// it names no feature.
protocol ChainMaking: Sendable {
    /// The chain of a run of `task` planned as `plan`, started as `start`, with `run` as the step
    /// that makes its attempts.
    @ConveyActor
    static func chain<Task: DownloadingTask>(for task: Task, plan: RunPlan, start: RunStart, run: any ChainStep) -> Chain
}

/// The rest of the chain after a step: what a step calls to pass a request on.
struct ChainNext: Sendable {
    fileprivate let steps: ArraySlice<any ChainStep>

    /// Sends `request` through the steps after this one and returns their response.
    func callAsFunction(_ request: TransportRequest, _ context: StepContext) async throws -> Exchange {
        guard let step = steps.first else {
            // The transport's step ends every chain and never calls `next`.
            throw RunnerDefect(description: "Convey internal error: a run's chain ended without a transport")
        }
        return try await step.intercept(request, context: context, next: ChainNext(steps: steps.dropFirst()))
    }
}

/// What a step knows of the run it is part of (`ActiveRun`): the plan, the run's lifecycle, its observers and
/// the values features keep for it, and which attempt a request belongs to.
struct StepContext: Sendable {
    /// The run.
    let run: ActiveRun
    /// The attempt the request belongs to, from 1: set by the run's own step for each attempt.
    var attempt: Int

    /// The run's settings.
    var plan: RunPlan { run.plan }

    /// Tells the run's observers that `kind` happened in this attempt.
    func emit(_ kind: @autoclosure () -> RunEvent.Kind) async {
        await run.observers.emit(kind(), attempt: attempt)
    }

    /// Whether anyone watches the run.
    var isObserved: Bool { !run.observers.isEmpty }
}
