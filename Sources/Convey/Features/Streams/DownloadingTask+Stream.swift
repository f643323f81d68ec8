import Foundation

extension DownloadingTask {
    /// Runs the task and returns as soon as the response head arrives, with the body as a
    /// `ResponseStream` to read as it arrives (chunks, or `lines`).
    ///
    /// The run is a normal one up to the head: hooks, the task's `statusRule` (`HTTPError` for a
    /// status it throws for, with up to 64 KiB of its body), retries, echo. The cache is bypassed. The
    /// task's idle timeout applies between chunks. The task's total timeout covers only the wait
    /// for the head; pass `totalTimeout` to limit the whole stream instead: it replaces the task's
    /// for this run, and the run's deadline then covers the body too. At most
    /// `bufferSize` bytes wait for the reader; then the transport stops reading (see
    /// Docs/streaming.md). The response's `data` is empty (or the start of an error body).
    public nonisolated func stream(totalTimeout: Duration? = nil, bufferSize: Int = ResponseStream.defaultBufferSize)
        async throws -> ServerResponse<ResponseStream> {
        try await TaskRunner(task: self).run(StreamDelivery(totalTimeout: totalTimeout, bufferSize: bufferSize))
    }

    /// The response as server-sent events (`text/event-stream`), reconnecting when the connection
    /// drops: see `ServerSentEvents`. Nothing is sent until iteration starts.
    public nonisolated func events(_ configuration: ServerSentEvents.Configuration = ServerSentEvents.Configuration())
        -> ServerSentEvents {
        ServerSentEvents(configuration: configuration) { lastEventID in
            var delivery = StreamDelivery(totalTimeout: nil, bufferSize: ResponseStream.defaultBufferSize)
            delivery.defaultHeaders = ["Accept": "text/event-stream"]
            delivery.requiredMediaType = "text/event-stream"
            if let lastEventID { delivery.headers = ["Last-Event-ID": lastEventID] }
            return try await TaskRunner(task: self).run(delivery)
        }
    }
}
