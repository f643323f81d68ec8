import Foundation

/// One open WebSocket connection: the stream of one handshake run's 101, the state machine that
/// frames it (`WebSocketStateMachine`), and who hears of it (`WebSocketEvents`). The payload of a
/// handshake run; a `WebSocketSession` reads and writes it, and replaces it when it reconnects.
final class WebSocketLink: Sendable {
    /// The handshake's URL (after redirects) and answer.
    let url: URL
    let head: ResponseHead
    let negotiation: WebSocketNegotiation
    /// The connection's bytes as the chain passed them up (wrapped by the steps that watch them):
    /// what the session reads, so that those steps see the connection end.
    let source: any BodySource
    /// The stream under `source`, which says how the connection ended before the wire closes.
    let body: WebSocketWireBody
    let wire: any WebSocketWire
    let events: WebSocketEvents
    /// The run's clock: pings, pong deadlines, the wait for the server's close, reconnection.
    let clock: any RunClock
    /// How long the client waits for the server's close (and for its own close frame to go out)
    /// before it closes the connection: the task's idle timeout.
    let closeTimeout: Duration
    /// The connection's total deadline, when `connect(totalTimeout:)` asked for one.
    let deadline: RunDeadline?
    private let lock = InlineLock()
    nonisolated(unsafe) private var machine: WebSocketStateMachine  // guarded by: lock
    /// Who sent the first close frame, once one went either way.
    nonisolated(unsafe) private var clientClosedFirst: Bool?  // guarded by: lock
    private let closeTimer = InlineLocked<Task<Void, Never>?>(nil)
    /// Messages that went out and came in on this link.
    let counts = InlineLocked<(sent: Int, received: Int)>((0, 0))
    /// The task sending pings on the task's interval, ended with the link.
    let pinger = InlineLocked<Task<Void, Never>?>(nil)

    init(exchange: Exchange, source: any BodySource, negotiation: WebSocketNegotiation, opened: WebSocketHandoff.Opened,
         settings: WebSocketSettings, plan: RunPlan, deadline: RunDeadline?) throws {
        do {
            machine = try WebSocketStateMachine(deflate: negotiation.deflate, maximumMessageSize: settings.maximumMessageSize)
        } catch {
            throw ConveyError.webSocket(.protocolError, url: exchange.head.url, closeCode: nil, reason: "zlib could not start: \(error.reason)")
        }
        url = exchange.head.url
        head = exchange.head
        self.negotiation = negotiation
        self.source = source
        body = opened.body
        wire = opened.wire
        events = WebSocketEvents(context: opened.context, settings: settings)
        clock = plan.clock
        closeTimeout = plan.idleTimeout
        self.deadline = deadline
    }

    deinit {
        closeTimer.value?.cancel()
        pinger.value?.cancel()
    }

    // MARK: Framing, under the lock

    /// What the machine makes of bytes from the server.
    func receive(_ data: Data) -> WebSocketStateMachine.Receipt {
        lock.withLock {
            let wasOpen = machine.state == .open
            let receipt = data.withUnsafeBytes { machine.receive($0) }
            if wasOpen, machine.state != .open, clientClosedFirst == nil {
                // A failure's close frame is the client's; a close event without one, the server's.
                clientClosedFirst = receipt.failure != nil
            }
            return receipt
        }
    }

    /// The connection ended: `nil` after the close handshake, else the failure it is.
    func endOfInput() -> WebSocketProtocolError? {
        lock.withLock { machine.endOfInput() }
    }

    /// A message's frame; throws when the connection is no longer open.
    func frame(_ message: WebSocketMessage) throws(WebSocketSendError) -> [UInt8] {
        // The lock and `withUnsafeBytes` rethrow untyped errors: the typed one travels out in a Result.
        try lock.withLock {
            switch message {
            case .text(let text):
                Result { () throws(WebSocketSendError) in try machine.sendText(text) }
            case .binary(let data):
                data.withUnsafeBytes { bytes in Result { () throws(WebSocketSendError) in try machine.sendBinary(bytes) } }
            }
        }.get()
    }

    /// A ping's frame, or `nil` once the connection is no longer open.
    func pingFrame(_ payload: [UInt8]) -> [UInt8]? {
        lock.withLock { try? machine.sendPing(payload) }
    }

    /// The client's close frame, or `nil` when a close went out already or the connection ended.
    func closeFrame(code: WebSocketCloseCode, reason: String) -> [UInt8]? {
        lock.withLock {
            guard machine.state == .open, let frame = try? machine.close(code: code, reason: reason) else { return nil }
            if clientClosedFirst == nil { clientClosedFirst = true }
            return frame
        }
    }

    /// Whether both close frames went (or the connection failed): nothing more is read but the end.
    var isClosed: Bool { lock.withLock { machine.state == .closed } }

    /// How the close handshake went: the code and reason to report (the first close frame's, the
    /// server's echo of the client's when it sent one), who closed first, and what the server sent.
    var closeSummary: (code: Int?, reason: String, byClient: Bool, received: WebSocketStateMachine.Close?) {
        lock.withLock {
            let byClient = clientClosedFirst ?? false
            let first = byClient ? machine.sentClose : machine.receivedClose
            return (first.map { Int($0.code?.rawValue ?? WebSocketCloseCode.noStatusReceived.rawValue) }, first?.reason ?? "", byClient,
                    machine.receivedClose)
        }
    }

    // MARK: Ending

    /// Closes the connection after `closeTimeout` unless it ended first, ending its body with
    /// `failure` (`nil`: as after the close handshake). Armed once.
    func armCloseTimer(_ failure: (any Error)?) {
        let clock = clock
        let deadline = clock.now + closeTimeout
        closeTimer.withLock { timer in
            guard timer == nil else { return }
            timer = Task { [body, wire] in
                guard (try? await clock.sleep(until: deadline)) != nil else { return }
                body.end(with: failure)
                wire.close()
            }
        }
    }

    /// Stops the link's timers once it ended.
    func ended() {
        closeTimer.value?.cancel()
        pinger.value?.cancel()
    }
}

/// Who hears of a WebSocket connection: the observers of the run that opened it (as events of
/// that run, after its end) and the HAR captures among the run's values.
struct WebSocketEvents: Sendable {
    let observers: RunObservers
    /// The attempt that opened the connection.
    let attempt: Int
    let showsSentContents: Bool
    let showsReceivedContents: Bool
    /// What keeps each message (a HAR capture's `_webSocketMessages`).
    let taps: [any WebSocketMessageTap]

    init(context: StepContext, settings: WebSocketSettings) {
        observers = context.run.observers
        attempt = context.attempt
        showsSentContents = settings.showsSentContents
        showsReceivedContents = settings.showsReceivedContents
        taps = context.run[WebSocketMessageTaps.self].map { Array($0.values) } ?? []
    }

    func opened(subprotocol: String?, extensions: [String]) async {
        await observers.emit(.webSocketOpened(subprotocol: subprotocol, extensions: extensions), attempt: attempt)
    }

    func message(_ message: WebSocketMessage, sent: Bool) async {
        if !taps.isEmpty {
            let date = Date()
            for tap in taps { tap.keep(message, sent: sent, at: date) }
        }
        guard !observers.isEmpty else { return }
        let contents = (sent ? showsSentContents : showsReceivedContents) ? message.bytes : nil
        await observers.emit(.webSocketMessage(sent: sent, isText: message.isText, size: message.size, contents: contents), attempt: attempt)
    }

    func ping(sent: Bool) async {
        await observers.emit(.webSocketPing(sent: sent), attempt: attempt)
    }

    func pong(sent: Bool, roundTrip: Duration?) async {
        await observers.emit(.webSocketPong(sent: sent, roundTrip: roundTrip), attempt: attempt)
    }

    func closed(code: Int?, reason: String, byClient: Bool, sent: Int, received: Int, error: (any Error)?) async {
        await observers.emit(.webSocketClosed(code: code, reason: reason, byClient: byClient, messagesSent: sent, messagesReceived: received,
                                              error: error), attempt: attempt)
    }
}

/// Keeps a WebSocket's messages as they go out and arrive: what HAR capture records in its entry.
/// Called in the connection's own tasks, never on a transport's thread; keep it quick.
protocol WebSocketMessageTap: Sendable {
    func keep(_ message: WebSocketMessage, sent: Bool, at date: Date)
}

/// The message taps of a run, each under its owner's identity: a step that watches the 101 adds
/// its tap, and the connection the run opens reads them.
enum WebSocketMessageTaps: RunValueKey {
    typealias Value = [ObjectIdentifier: any WebSocketMessageTap]
}
