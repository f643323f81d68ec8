import Foundation

/// How `DownloadingTask.events(…)` reads the events of a `text/event-stream` response into a
/// `ResponseStream<ServerSentEvent>`, reconnecting when the connection drops.
///
/// It connects when iteration starts, as a run of the task (hooks, status check, retries before
/// the head arrive), sending `Accept: text/event-stream` unless the task names its own `Accept`.
/// When the body ends or the connection breaks (a transport failure or the idle timeout), it
/// waits and connects again with `Last-Event-ID` set to the last `id:` received. The wait is the
/// reconnection time (the server's last `retry:`, else `events(reconnectionTime:)`) held
/// between `minimumReconnectionTime` (1 s) and `maximumReconnectionTime` (60 s), and doubled for
/// each connection in a row that brought no event (failed, or ended without one), up to that
/// maximum; an event brings it back to the reconnection time. So a server that closes at once,
/// even with `retry: 0`, is asked again less and less often. It ends:
/// - normally, when a response is `204 No Content`;
/// - with the error, for a status the task's `statusRule` throws for (`HTTPError`), a `Content-Type` other than
///   `text/event-stream` (`ConveyError.decodingFailed`), an event over the size limit
///   (`ConveyError.responseTooLarge`), or after `maximumConsecutiveFailures` attempts in a row
///   that got no response head;
/// - with `ConveyError.cancelled` when the reading task is cancelled; leaving the loop ends the
///   connection at once.
enum ServerSentEvents {
    /// How the reader reconnects, and how large events may be: the parameters of
    /// `DownloadingTask.events(…)`, and the clock the tests give it.
    struct Configuration: Sendable {
        /// Whether to reconnect after the connection drops. Default: `true`.
        var reconnects: Bool
        /// How long to wait before reconnecting until the server sends `retry:`. Default: 3 s.
        var reconnectionTime: Duration
        /// The shortest wait before reconnecting, whatever `retry:` or `reconnectionTime` say. Default: 1 s.
        var minimumReconnectionTime: Duration
        /// The longest wait before reconnecting, whatever `retry:` says and however long the
        /// backoff has grown. Default: 60 s.
        var maximumReconnectionTime: Duration
        /// Connection attempts in a row that may fail before the response head arrives (no
        /// server, a reset) before the reader gives up with the last error. Default: 5.
        var maximumConsecutiveFailures: Int
        /// The ID to resume after, sent as `Last-Event-ID` on the first connection. Default: none.
        var lastEventID: String?
        /// The most bytes one event's data (or one line) may take. Default: 1 MiB.
        var maximumEventSize: Int
        /// Waits before a reconnection: `Task.sleep(for:)`, or a test's own clock (`sleeping(with:)`).
        /// Throwing (a cancelled wait) ends the reader with `ConveyError.cancelled`.
        private(set) var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

        /// Creates a configuration; every parameter has the documented default.
        init(reconnects: Bool = true, reconnectionTime: Duration = .seconds(3),
                    minimumReconnectionTime: Duration = .seconds(1), maximumReconnectionTime: Duration = .seconds(60),
                    maximumConsecutiveFailures: Int = 5, lastEventID: String? = nil, maximumEventSize: Int = 1 << 20) {
            self.reconnects = reconnects
            self.reconnectionTime = reconnectionTime
            self.minimumReconnectionTime = minimumReconnectionTime
            self.maximumReconnectionTime = maximumReconnectionTime
            self.maximumConsecutiveFailures = maximumConsecutiveFailures
            self.lastEventID = lastEventID
            self.maximumEventSize = maximumEventSize
        }

        /// The same configuration waiting through `sleep` instead of the real clock.
        func sleeping(with sleep: @escaping @Sendable (Duration) async throws -> Void) -> Configuration {
            var configuration = self
            configuration.sleep = sleep
            return configuration
        }
    }

    /// Opens one connection, sending `Last-Event-ID` when given one.
    typealias Connect = @Sendable (_ lastEventID: String?) async throws -> ServerResponse<ResponseStream<Data>>

    /// The events of one loop, in order, across reconnections.
    static func stream(configuration: Configuration, connect: @escaping Connect) -> ResponseStream<ServerSentEvent> {
        ResponseStream(body: nil) { Reader(configuration: configuration, connect: connect) }
    }

    /// Reads the events in order, across reconnections.
    struct Reader: StreamReader {
        private let configuration: Configuration
        private let connect: Connect
        private var parser: ServerSentEventParser
        private var body: ResponseStream<Data>.AsyncIterator?
        private var ready = ReadyQueue<ServerSentEvent>()
        private var connections = 0
        private var consecutiveFailures = 0
        /// Connection attempts since an event last arrived: what the backoff doubles for.
        private var connectionsWithoutEvent = 0
        private var ended = false

        init(configuration: Configuration, connect: @escaping Connect) {
            self.configuration = configuration
            self.connect = connect
            parser = ServerSentEventParser(maximumEventSize: configuration.maximumEventSize,
                                           lastEventID: configuration.lastEventID ?? "")
        }

        /// The next event; `nil` once the server said 204 or reconnecting is off and the body ended.
        mutating func next() async throws -> ServerSentEvent? {
            while true {
                if let item = ready.popFirst() { return item }
                if ended { return nil }
                do {
                    try await step()
                } catch {
                    ended = true
                    body = nil
                    throw error
                }
            }
        }

        /// Connects if needed, then parses the next chunk into `ready`, or notes the end of a body.
        private mutating func step() async throws {
            guard var current = body else {
                try await open()
                return
            }
            let chunk: Data?
            do {
                chunk = try await current.next()
            } catch let error where Self.isDrop(error) && configuration.reconnects {
                body = nil
                return
            }
            guard let chunk else {
                body = nil
                if !configuration.reconnects { ended = true }
                return
            }
            body = current
            try parser.feed(chunk) { event in
                ready.append(event)
                connectionsWithoutEvent = 0
            }
        }

        /// Opens a connection, after the reconnection time unless it is the first.
        private mutating func open() async throws {
            if connections > 0 {
                let wait = Self.reconnectionWait(
                    base: parser.retryMilliseconds.map { Duration.milliseconds($0) } ?? configuration.reconnectionTime,
                    connectionsWithoutEvent: connectionsWithoutEvent, configuration: configuration)
                do {
                    try await configuration.sleep(wait)
                } catch {
                    throw ConveyError.cancelled
                }
                if Task.isCancelled { throw ConveyError.cancelled }
            }
            connections += 1
            connectionsWithoutEvent += 1
            let response: ServerResponse<ResponseStream<Data>>
            do {
                response = try await connect(parser.lastEventID.isEmpty ? nil : parser.lastEventID)
            } catch let error where Self.isDrop(error) && configuration.reconnects {
                consecutiveFailures += 1
                if consecutiveFailures >= configuration.maximumConsecutiveFailures { throw error }
                return
            }
            consecutiveFailures = 0
            if response.statusCode == 204 {
                response.payload.cancel()
                ended = true
                return
            }
            parser.beginConnection(url: response.head.url)
            body = response.payload.makeAsyncIterator()
        }

        /// The wait before the next connection: `base` held between the configured minimum and
        /// maximum, doubled for each connection without an event after the first, up to the maximum.
        static func reconnectionWait(base: Duration, connectionsWithoutEvent: Int, configuration: Configuration) -> Duration {
            let maximum = configuration.maximumReconnectionTime
            // Clamped before doubling, so a huge `retry:` cannot overflow.
            var wait = Swift.min(Swift.max(base, configuration.minimumReconnectionTime), maximum)
            var doublings = connectionsWithoutEvent - 1
            while doublings > 0, wait < maximum {
                wait = Swift.min(wait * 2, maximum)
                doublings -= 1
            }
            return wait
        }

        /// Whether an error means the connection dropped, so reconnecting may help. A transport
        /// that refuses streams refuses every connection alike.
        private static func isDrop(_ error: any Error) -> Bool {
            switch error {
            case ConveyError.transport(let failure, _, let code, _): !URLSessionTransport.isRefusedStream(failure, code: code)
            case ConveyError.attemptTimedOut: true
            default: false
            }
        }
    }
}
