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
    public nonisolated func stream(totalTimeout: Duration? = nil, bufferSize: Int = ResponseStream<Data>.defaultBufferSize)
        async throws -> ServerResponse<ResponseStream<Data>> {
        try await TaskRunner(task: self).run(StreamDelivery(totalTimeout: totalTimeout, bufferSize: bufferSize))
    }

    /// The response as server-sent events (`text/event-stream`), reconnecting when the connection
    /// drops. Nothing is sent until iteration starts.
    ///
    /// Each loop connects as a run of the task (hooks, status check, retries before the head
    /// arrive), sending `Accept: text/event-stream` unless the task names its own `Accept`. When
    /// the body ends or the connection breaks (a transport failure or the idle timeout), it waits
    /// and connects again with `Last-Event-ID` set to the last `id:` received. The wait is the
    /// reconnection time (the server's last `retry:`, else `reconnectionTime`) held between
    /// `minimumReconnectionTime` and `maximumReconnectionTime`, and doubled for each connection in
    /// a row that brought no event, up to that maximum. The loop ends normally when a response is
    /// `204 No Content`; with the error for a status the task's `statusRule` throws for
    /// (`HTTPError`), a `Content-Type` other than `text/event-stream`
    /// (`ConveyError.decodingFailed`), an event over the size limit (`ConveyError.responseTooLarge`)
    /// or `maximumConsecutiveFailures` attempts in a row that got no response head; with
    /// `ConveyError.cancelled` when the reading task is cancelled. Leaving the loop ends the
    /// connection at once.
    ///
    /// - Parameters:
    ///   - lastEventID: the ID to resume after, sent as `Last-Event-ID` on the first connection.
    ///   - reconnects: whether to reconnect after the connection drops.
    ///   - reconnectionTime: how long to wait before reconnecting until the server sends `retry:`.
    ///   - minimumReconnectionTime: the shortest wait before reconnecting, whatever `retry:` or
    ///     `reconnectionTime` say.
    ///   - maximumReconnectionTime: the longest wait before reconnecting, whatever `retry:` says
    ///     and however long the backoff has grown.
    ///   - maximumConsecutiveFailures: connection attempts in a row that may fail before the
    ///     response head arrives (no server, a reset) before the reader gives up with the last error.
    ///   - maximumEventSize: the most bytes one event's data (or one line) may take.
    public nonisolated func events(lastEventID: String? = nil, reconnects: Bool = true, reconnectionTime: Duration = .seconds(3),
                                   minimumReconnectionTime: Duration = .seconds(1), maximumReconnectionTime: Duration = .seconds(60),
                                   maximumConsecutiveFailures: Int = 5, maximumEventSize: Int = 1 << 20) -> ResponseStream<ServerSentEvent> {
        events(ServerSentEvents.Configuration(
            reconnects: reconnects, reconnectionTime: reconnectionTime, minimumReconnectionTime: minimumReconnectionTime,
            maximumReconnectionTime: maximumReconnectionTime, maximumConsecutiveFailures: maximumConsecutiveFailures,
            lastEventID: lastEventID, maximumEventSize: maximumEventSize))
    }

    /// The events read with `configuration`, which tests give a clock of their own (`sleeping(with:)`).
    nonisolated func events(_ configuration: ServerSentEvents.Configuration) -> ResponseStream<ServerSentEvent> {
        ServerSentEvents.stream(configuration: configuration) { lastEventID in
            var delivery = StreamDelivery(totalTimeout: nil, bufferSize: ResponseStream<Data>.defaultBufferSize)
            delivery.defaultHeaders = ["Accept": "text/event-stream"]
            delivery.requiredMediaType = "text/event-stream"
            if let lastEventID { delivery.headers = ["Last-Event-ID": lastEventID] }
            return try await TaskRunner(task: self).run(delivery)
        }
    }
}
