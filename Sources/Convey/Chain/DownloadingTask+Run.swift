import Foundation

extension DownloadingTask {
    /// Runs the task and returns the decoded response. Throws `HTTPError` for a status the task's
    /// `statusRule` says throws (by default every status outside 200–299, unless the server's
    /// `reportBadHTTPStatusAsError` is off) and `ConveyError` for everything else that goes wrong.
    @discardableResult
    public nonisolated func download() async throws -> ServerResponse<DownloadPayload> {
        try await TaskRunner(task: self).run()
    }

    /// Runs the task for its effect, ignoring the payload. Throws as `download()` does.
    public nonisolated func send() async throws {
        _ = try await TaskRunner(task: self).run()
    }
}

extension TaskRunner {
    /// A runner of `task` through the chain every run goes through (`RunChain`), started as `start`.
    init(task: T, start: RunStart = RunStart()) {
        self.init(task: task, chain: RunChain.self, start: start)
    }
}
