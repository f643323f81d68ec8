/// Background-task assertions' part in runs: on a server with
/// `ServerConfiguration.finishesRunsInBackground`, each run holds the process's assertion (the
/// configuration's, in tests) from its start to its end (`BackgroundRunObserver`).
struct BackgroundRunFeature: RunFeature {
    @ConveyActor
    func join<Task: DownloadingTask>(_ parts: inout RunParts, task: Task, setup: RunSetup) {
        let configuration = setup.server.storedConfiguration
        if configuration.finishesRunsInBackground { parts.observers.append(BackgroundRunObserver(assertion: configuration.backgroundRunAssertion)) }
    }
}

/// Tells the assertion when a run starts and when it ends, however it ends.
struct BackgroundRunObserver: RunObserver {
    let assertion: BackgroundRunAssertion

    func observe(_ event: RunEvent) async {
        switch event.kind {
        case .runStarted: assertion.runStarted()
        case .runFinished: assertion.runEnded()
        case .attemptStarted, .requestSent, .responseReceived, .bodyFinished, .exchangeFailed, .redirectFollowed, .cacheOutcome,
             .cacheExchange, .attemptFinished, .retryScheduled, .credentialRefresh:
            break
        }
    }
}
