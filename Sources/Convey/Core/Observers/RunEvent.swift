import Foundation

/// One thing that happened in a run, as a `RunObserver` receives it.
///
/// A run's events come in this order: `runStarted`; for each attempt `attemptStarted`, then for
/// each exchange on the wire (the first request, each redirect hop, each cache revalidation)
/// `requestSent`, `responseReceived` and `bodyFinished` (or `exchangeFailed`), a
/// `redirectFollowed` for each redirect the run follows, `cacheOutcome` when the server has a
/// cache, and `attemptFinished`; between attempts `retryScheduled` or `credentialRefresh`; last
/// `runFinished`. An attempt the cache answers has no exchange on the wire. The exchanges of a
/// stream (`stream()`, `events()`) finish after the run: their `bodyFinished` comes when the
/// caller has read the stream to its end, after `runFinished`. A WebSocket's run is its opening
/// handshake; its connection's events (`webSocketOpened`, then messages, pings and pongs, last
/// `webSocketClosed`) come after `runFinished`, with the run's ID and the attempt that opened it.
public struct RunEvent: Sendable {
    /// The run: the same for every event of one run, different for every run of the process.
    public let runID: UInt64
    /// The task being run. Its type names it (`type(of: event.task)`); its properties are read on `@ConveyActor`.
    public let task: any DownloadingTask
    /// The attempt the event belongs to, from 1.
    public let attempt: Int
    /// When it happened.
    public let date: Date
    /// What happened.
    public let kind: Kind

    init(runID: UInt64, task: any DownloadingTask, attempt: Int, kind: Kind) {
        self.runID = runID
        self.task = task
        self.attempt = attempt
        date = Date()
        self.kind = kind
    }

    /// What happened.
    public enum Kind: Sendable {
        /// The run started: its request is built (or failed to build) and its first attempt begins.
        case runStarted
        /// An attempt started: the first, or the next after a retry wait or a credential refresh.
        case attemptStarted
        /// A request went to the transport, with its fields as sent (credentials included: mask
        /// them with `Redaction` before they leave your process).
        case requestSent(OutgoingRequest)
        /// The head of the response to the last `requestSent` arrived.
        case responseReceived(ResponseHead)
        /// The exchange of the last `requestSent` completed: its request, head, metrics (bytes
        /// each way, timings) and duration. Its `data` is empty: bodies kept in memory come with
        /// `attemptFinished` and `runFinished`.
        case bodyFinished(ServerResponse<Data>)
        /// The exchange of the last `requestSent` ended without a whole response.
        case exchangeFailed(any Error)
        /// A hop answered with a redirect the run follows: its exchange, body dropped.
        case redirectFollowed(ServerResponse<Data>)
        /// How the cache answered the attempt (only for runs with a cache).
        case cacheOutcome(CacheStatus)
        /// An exchange the cache made besides the attempt's own (a 304 that confirmed another
        /// representation, a stale response's background refresh), with its outcome.
        case cacheExchange(OutgoingRequest, ServerResponse<Data>?, error: (any Error)?, duration: Duration)
        /// The attempt ended: the request it sent (nil when it failed before one was built), the
        /// response it made its payload from or failed on, and its failure (nil on success).
        case attemptFinished(request: OutgoingRequest?, response: ServerResponse<Data>?, error: (any Error)?, duration: Duration)
        /// The attempt failed with this error, and the next starts after `delay`.
        case retryScheduled(after: any Error, delay: Duration)
        /// The server's credential refresh ran after a 401: `refreshed` says whether it gave new
        /// credentials, in which case the next attempt sends them.
        case credentialRefresh(refreshed: Bool)
        /// The run ended: with its final response (nil when none completed) and its failure (nil
        /// on success). Cancellation is `ConveyError.cancelled`.
        case runFinished(ServerResponse<Data>?, error: (any Error)?)
        /// A WebSocket connection opened (`WebSocketTask.connect()`): the subprotocol and the
        /// extensions the server chose (each as its `Sec-WebSocket-Extensions` spelt it).
        case webSocketOpened(subprotocol: String?, extensions: [String])
        /// A WebSocket message went out (`sent`) or arrived: text or binary, and its size in bytes
        /// before compression. `contents` is the message (text in UTF-8) only when the task's echo
        /// style prints bodies (`consoleFull` and its cut versions), else `nil`.
        case webSocketMessage(sent: Bool, isText: Bool, size: Int, contents: Data?)
        /// A WebSocket ping went out (`sent`: `ping()` or the task's `pingInterval`) or arrived
        /// (and was answered with a pong at once).
        case webSocketPing(sent: Bool)
        /// A WebSocket pong went out (`sent`: the answer to the server's ping) or arrived, with how
        /// long after the client's ping it came, when it answered one.
        case webSocketPong(sent: Bool, roundTrip: Duration?)
        /// A WebSocket connection ended: the close code and reason of the close handshake (`code`
        /// is `nil` when none was exchanged: the connection was lost), whether the client closed
        /// first, how many messages went each way, and why, when it did not end with a close handshake.
        case webSocketClosed(code: Int?, reason: String, byClient: Bool, messagesSent: Int, messagesReceived: Int, error: (any Error)?)
    }
}
