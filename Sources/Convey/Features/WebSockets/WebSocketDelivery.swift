import Foundation

/// What a WebSocket connection reads of its task, once, on `@ConveyActor`, when `connect()` starts.
struct WebSocketSettings: Sendable {
    let subprotocols: [String]
    let maximumMessageSize: Int
    let offersCompression: Bool
    let pingInterval: Duration?
    let pongDeadline: Duration
    let reconnection: RetryPolicy?
    /// Whether message events carry the messages (the task's echo style prints request or response bodies).
    let showsSentContents: Bool
    let showsReceivedContents: Bool
    /// The connection's whole lifetime, when `connect(totalTimeout:)` asked for one.
    let totalTimeout: Duration?
    /// How many bytes of messages may wait each way: for the app to read them, and to go out.
    let bufferSize: Int

    @ConveyActor
    init<Task: WebSocketTask>(task: Task, totalTimeout: Duration?, bufferSize: Int) {
        subprotocols = task.subprotocols
        maximumMessageSize = max(1, task.maximumMessageSize)
        offersCompression = task.offersCompression
        pingInterval = task.pingInterval.map { max($0, .milliseconds(1)) }
        pongDeadline = max(task.pongDeadline, .milliseconds(1))
        reconnection = task.reconnection
        let style = task.configuration?.echoStyle ?? task.echoStyle
        showsSentContents = style.printsRequestDetail
        showsReceivedContents = style.printsResponseDetail
        self.totalTimeout = totalTimeout.map { max($0, .milliseconds(1)) }
        self.bufferSize = max(1, bufferSize)
    }
}

/// How a WebSocket's handshake run hands its byte stream from the upgrade step to its delivery:
/// kept among the run's values (`RunStart.values`), under its own type.
final class WebSocketHandoff: RunValueKey, Sendable {
    typealias Value = WebSocketHandoff

    /// A stream the upgrade step opened with a 101, and the step's context (the run's observers
    /// and values, the attempt).
    struct Opened: Sendable {
        let body: WebSocketWireBody
        let wire: any WebSocketWire
        let context: StepContext
    }

    private let opened = InlineLocked<Opened?>(nil)

    /// Keeps the stream of the attempt's 101: the latest, since only the attempt that succeeds is delivered.
    func offer(_ stream: Opened) {
        opened.set(stream)
    }

    /// The stream of the last 101, once.
    func take() -> Opened? {
        opened.withLock { opened in
            defer { opened = nil }
            return opened
        }
    }
}

/// The delivery of a WebSocket's handshake run: each attempt's request gets the handshake's fields
/// with a fresh key, its 101 is checked (`WebSocketHandshake.check`), and the payload is the open
/// connection (`WebSocketLink`), which pulls the raw bytes the chain passed up as the body.
struct WebSocketDelivery: ResponseDelivery {
    let settings: WebSocketSettings
    let handoff = WebSocketHandoff()

    /// How the run starts: with the handoff among its values, which makes its chain end with the
    /// upgrade step.
    var start: RunStart {
        var start = RunStart()
        start.values[WebSocketHandoff.self] = handoff
        return start
    }

    var totalTimeout: Duration? { settings.totalTimeout }
    var bufferSize: Int { settings.bufferSize }

    /// The offer this run makes, with `key` when given (the key an attempt sent).
    private func handshake(key: String?) throws -> WebSocketHandshake {
        let offer = settings.offersCompression ? PerMessageDeflateOffer() : nil
        do throws(WebSocketHandshakeError) {
            if let key { return try WebSocketHandshake(key: key, subprotocols: settings.subprotocols, deflateOffer: offer) }
            return try WebSocketHandshake(subprotocols: settings.subprotocols, deflateOffer: offer)
        } catch {
            throw ConveyError.webSocket(.invalidArgument, url: nil, closeCode: nil, reason: error.description)
        }
    }

    /// A GET without a body, with the handshake's fields and a fresh key.
    @ConveyActor
    func prepare(_ request: inout OutgoingRequest) throws -> (any AttemptHold)? {
        request.method = .get
        request.body = nil
        request.fields.append(contentsOf: try handshake(key: nil).requestFields)
        return nil
    }

    /// Checks the 101 against the key the attempt sent: a 101 that breaks the handshake's rules
    /// fails the attempt, never retried.
    func stage(_ exchange: inout Exchange, holding hold: (any AttemptHold)?, plan: RunPlan) async throws -> WebSocketNegotiation {
        try negotiation(of: exchange)
    }

    private func negotiation(of exchange: Exchange) throws -> WebSocketNegotiation {
        let url = exchange.request.url
        let checked = try handshake(key: exchange.request.fields["Sec-WebSocket-Key"] ?? "")
        let outcome: WebSocketHandshakeOutcome
        do throws(WebSocketHandshakeError) {
            outcome = try checked.check(exchange.head)
        } catch {
            throw ConveyError.webSocket(.handshakeFailed, url: url, closeCode: nil, reason: error.description)
        }
        switch outcome {
        case .upgraded(let negotiation): return negotiation
        case .declined(let status):
            throw ConveyError.webSocket(.handshakeFailed, url: url, closeCode: nil,
                                        reason: "the server answered \(status) \(HTTPStatus.reasonPhrase(for: status)), not 101 Switching Protocols")
        }
    }

    /// The open connection, over the stream of the run's last 101.
    func payload(_ exchange: Exchange, staged: WebSocketNegotiation?, holding hold: (any AttemptHold)?, plan: RunPlan,
                 deadline: RunDeadline?) async throws -> WebSocketLink {
        do {
            let negotiation = try staged ?? negotiation(of: exchange)
            guard let opened = handoff.take() else {
                throw ConveyError.webSocket(.handshakeFailed, url: exchange.request.url, closeCode: nil,
                                            reason: "the 101 did not come from the network (a step or a HAR file answered the handshake)")
            }
            guard case .stream(let source) = exchange.body else {
                opened.body.close()
                throw ConveyError.webSocket(.handshakeFailed, url: exchange.request.url, closeCode: nil,
                                            reason: "a step kept the 101's body in memory: the connection's bytes are gone")
            }
            return try WebSocketLink(exchange: exchange, source: source, negotiation: negotiation, opened: opened, settings: settings,
                                     plan: plan, deadline: settings.totalTimeout == nil ? nil : deadline)
        } catch {
            exchange.body.close()
            throw error
        }
    }
}
