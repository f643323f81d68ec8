/// Tracing's part in runs: on a server with `ServerConfiguration.tracing`, a step around the run
/// (outermost, so that the run's span covers the app's own steps) and a step around each exchange
/// on the wire (innermost, nearest the wire). A server without tracing adds nothing to its runs.
struct TracingFeature: RunFeature {
    @ConveyActor
    func join<Task: DownloadingTask>(_ parts: inout RunParts, task: Task, setup: RunSetup) {
        guard let tracing = setup.server.storedConfiguration.tracing else { return }
        let policy = TracePolicy(tracing: tracing, remote: parts.url ?? setup.server.remote?.url,
                                 redaction: setup.server.storedConfiguration.redaction)
        parts.runSteps.insert(RunSpanStep(policy: policy, taskType: Task.self), at: 0)
        parts.exchangeSteps.append(ExchangeSpanStep())
    }
}
