/// Tells the process's background-task assertion when a run starts and when it ends, however it
/// ends: on a server with `ServerConfiguration.finishesRunsInBackground`, each run holds the
/// assertion from its start to its end.
struct BackgroundRunObserver: RunObserver {
    let assertion: BackgroundRunAssertion

    func observe(_ event: RunEvent) async {
        switch event.kind {
        case .runStarted: assertion.runStarted()
        case .runFinished: assertion.runEnded()
        case .attemptStarted, .requestSent, .responseReceived, .bodyFinished, .exchangeFailed, .redirectFollowed, .cacheOutcome,
             .cacheExchange, .attemptFinished, .retryScheduled, .credentialRefresh, .webSocketOpened, .webSocketMessage, .webSocketPing,
             .webSocketPong, .webSocketClosed:
            break
        }
    }
}
