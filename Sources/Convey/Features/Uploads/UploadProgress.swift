import Foundation

/// How much of a request body has gone out: what the relay compares and hands on.
struct UploadProgress: Sendable, Hashable {
    /// Body bytes sent so far (after compression, when the body is gzipped).
    var bytesSent: Int64
    /// The body's size on the wire, when known.
    var totalBytes: Int64?

    /// Creates a progress report.
    init(bytesSent: Int64, totalBytes: Int64?) {
        self.bytesSent = bytesSent
        self.totalBytes = totalBytes
    }

    /// `bytesSent / totalBytes`, from 0 to 1; `nil` while the size is unknown.
    var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(bytesSent) / Double(totalBytes))
    }
}

/// Receives upload progress as the body goes out (the type of `UploadingTask.uploadProgressHandler`).
typealias UploadProgressHandler = @Sendable (UploadProgress) -> Void

/// Passes a transport's progress on to a task's `uploadProgressHandler`: the upload side only,
/// only when it changed, and never on the transport's thread. The transport reports from its own
/// thread; the handler runs on a queue of the relay's own, one report at a time, in order, and
/// a handler slower than the transfer sees the latest progress rather than every step.
final class UploadProgressRelay: Sendable {
    private let handler: UploadProgressHandler
    private let queue = DispatchQueue(label: "Convey.uploadProgress")
    private let state = InlineLocked(Reports())

    private struct Reports: Sendable {
        var last: UploadProgress?
        /// The newest report the handler has not seen yet, and whether a delivery is on its way.
        var pending: UploadProgress?
        var delivering = false
    }

    init(handler: @escaping UploadProgressHandler) {
        self.handler = handler
    }

    /// The relay for a task: `nil` unless it is an upload task with a handler.
    @ConveyActor
    static func relay<Task: DownloadingTask>(for task: Task) -> UploadProgressRelay? {
        guard let handler = (task as? any UploadingTask)?.uploadProgressHandler else { return nil }
        return UploadProgressRelay { @Sendable progress in handler(progress.bytesSent, progress.totalBytes) }
    }

    /// The callback a transport calls, from any thread.
    var transportHandler: @Sendable (TransferProgress) -> Void { report }

    func report(_ transfer: TransferProgress) {
        guard transfer.bytesSent > 0 || transfer.totalBytesToSend != nil else { return }
        let progress = UploadProgress(bytesSent: transfer.bytesSent, totalBytes: transfer.totalBytesToSend)
        let startsDelivery = state.withLock { reports in
            guard reports.last != progress else { return false }
            reports.last = progress
            reports.pending = progress
            if reports.delivering { return false }
            reports.delivering = true
            return true
        }
        if startsDelivery { queue.async { self.deliver() } }
    }

    /// Returns once the handler has seen every report made so far, so a run returns only after
    /// its handler saw the last one.
    func drained() async {
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }

    /// Hands the handler each newest report until none is left; runs on `queue`.
    private func deliver() {
        while let next = state.withLock({ reports -> UploadProgress? in
            defer { reports.pending = nil }
            if reports.pending == nil { reports.delivering = false }
            return reports.pending
        }) {
            handler(next)
        }
    }
}

/// Upload progress's step: a run of an upload task with a progress handler has the transport
/// report each request's progress to the relay, and each exchange returns only once the task's
/// handler has seen the last report.
struct UploadProgressStep: ChainStep {
    let relay: UploadProgressRelay

    /// The step for a run of `task`, or `nil` unless it is an upload task with a handler.
    @ConveyActor
    init?<Task: DownloadingTask>(task: Task) {
        guard let relay = UploadProgressRelay.relay(for: task) else { return nil }
        self.relay = relay
    }

    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        var reported = request
        reported.progress = relay.transportHandler
        let exchange = try await next(reported, context)
        await relay.drained()
        return exchange
    }
}
