import Foundation

/// Every run's chain, in one place: the steps a run goes through, in order, the app's and Convey's
/// own alike (each a `ChainStep`, the shape of the app's `Interceptor`), and who hears of it.
///
/// Read top to bottom: a request goes down the list, the response (its head, and its body as a
/// value) comes back up it. A feature takes part by adding its step, or its observer, here: one
/// line. The core knows this function only through `ChainMaking`, so the core names no feature.
enum RunChain: ChainMaking {
    @ConveyActor
    static func chain<Task: DownloadingTask>(for task: Task, plan: RunPlan, start: RunStart, run: any ChainStep) -> Chain {
        let configuration = plan.server.storedConfiguration
        let tracing = TracePolicy(of: plan, start: start)
        let metrics = MetricsStep(plan: plan)
        let taskRunSteps = task.interceptors
        let taskExchangeSteps = task.exchangeInterceptors
        let fixtures = HARFixtures.current.reversed()
        var steps: [any ChainStep] = []
        steps.reserveCapacity(configuration.runSteps.count + taskRunSteps.count + configuration.exchangeSteps.count
                              + taskExchangeSteps.count + 8)

        // Around the run, once: its span, then the app's steps (the server's, then the task's).
        if let tracing { steps.append(RunSpanStep(policy: tracing, name: RunLabel.taskName(of: Task.self, start: start))) }
        steps += configuration.runSteps
        for step in taskRunSteps { steps.append(AppStep(interceptor: step)) }
        // The run itself: its attempts, retries, credential refresh and deadline, owned by its machine.
        steps.append(run)

        // Around each attempt: each hop of a redirect chain, the cache's answers (bodies kept in
        // memory, each counted by outcome when metrics are on), answers from HAR files (an inner
        // scope's first), the upload's progress.
        if plan.redirects.follows { steps.append(RedirectStep()) }
        if let cache = CacheStep(task: task, plan: plan) {
            if let metrics { steps.append(CacheMetricsStep(recorder: metrics.recorder)) }
            steps.append(cache)
        }
        steps += fixtures.compactMap(HARReplayStep.init)
        if let progress = UploadProgressStep(task: task) { steps.append(progress) }

        // Around each exchange on the wire: the app's steps, the trace headers and client span,
        // the request's measurements, a HAR file's record of what went out and came back, then
        // the transport, or for a WebSocket's handshake the stream it opens on the transport.
        steps += configuration.exchangeSteps
        for step in taskExchangeSteps { steps.append(AppStep(interceptor: step)) }
        if tracing != nil { steps.append(ExchangeSpanStep()) }
        if let metrics { steps.append(metrics) }
        steps += fixtures.compactMap(HARCaptureStep.init)
        steps.append(WebSocketUpgradeStep(task: task, start: start) ?? TransportStep())

        // Who hears of the run: the app's observers, then echo and recording, then the
        // background-task assertion.
        var observers = configuration.observers
        if let echo = EchoObserver(task: task, plan: plan, start: start) { observers.append(echo) }
        if configuration.finishesRunsInBackground { observers.append(BackgroundRunObserver(assertion: configuration.backgroundRunAssertion)) }
        return Chain(steps: steps, observers: observers)
    }
}
