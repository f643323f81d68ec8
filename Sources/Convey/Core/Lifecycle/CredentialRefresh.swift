/// Runs a server's credential refresh once for every task that got a 401 meanwhile: the core's
/// rule that a 401 leads to at most one refresh and one retry per run (`RunStateMachine`).
@ConveyActor
final class CredentialRefresh {
    /// Counts successful refreshes, so a 401 to a request sent before the last refresh just retries.
    private(set) var generation = 0
    private var inFlight: Task<Bool, Never>?

    /// Whether the task that got `error` should be retried with fresh credentials.
    ///
    /// - Parameter sentGeneration: `generation` when the failed request was built.
    func refresh(for server: ConveyServer, after error: HTTPError, sentGeneration: Int) async -> Bool {
        if generation != sentGeneration { return true }
        if let inFlight { return await inFlight.value }
        let refresh = Task { () -> Bool in
            (try? await server.refreshCredentials(after: error)) ?? false
        }
        inFlight = refresh
        let refreshed = await refresh.value
        inFlight = nil
        if refreshed { generation += 1 }
        return refreshed
    }
}
