import Foundation

/// An open WebSocket connection, from `WebSocketTask.connect()`: send text and binary messages,
/// read the server's as `messages`, ping, close.
///
/// ```swift
/// let connection = try await ChatSocket(room: "general").connect()
/// try await connection.send("hello")
/// for try await message in connection.messages {
///     if case .text(let text) = message { print(text) }
/// }
/// // The loop ends when the connection closes: `closeCode` says how the server closed it.
/// ```
///
/// Both directions are bounded by the `bufferSize` `connect` was given (1 MiB by default):
/// - `messages` holds at most that many bytes of messages (plus one message) for its reader;
///   then the connection stops reading from the network until the reader takes some, and the
///   server's sending slows to what TCP holds. Pings on an interval pause meanwhile.
/// - `send` waits while that many bytes wait to go out, and returns once its message is queued
///   (messages go out in the order queued). A message larger than the buffer waits until the
///   buffer is empty.
///
/// The connection ends:
/// - with the close handshake, from either side (`close(code:reason:)`, or the server's close,
///   answered at once): `messages` ends normally after the messages before the close, whatever
///   code the server sent (`closeCode`, `closeReason`);
/// - with `ConveyError.webSocket` (`WebSocketFailure` says which: a protocol error the client
///   closed with 1002 or 1007, a message too big (1009), a lost connection (1006), a pong that did
///   not come (1001)), which `messages` throws after the messages before it, and `send` and `ping`
///   throw from then on;
/// - with `ConveyError.cancelled` when the task reading `messages` is cancelled, or
///   `ConveyError.totalTimedOut` when `connect(totalTimeout:)`'s limit passes: the client closes
///   with 1001 without waiting for the server's answer. Letting go of the connection (and of every
///   `messages` stream) does the same.
///
/// With the task's `reconnection`, a connection that drops (1006, a pong that did not come, the
/// server going away with 1001 or 1011–1014) is opened again by a new run of the task, after the
/// policy's backoff with jitter; `messages` goes on across it, and `send` queues meanwhile.
/// Messages that were being written when it dropped may be lost: nothing is sent twice.
public final class WebSocketConnection: Sendable {
    let session: WebSocketSession

    /// How many bytes of messages may wait each way by default: 1 MiB.
    public static var defaultBufferSize: Int { 1 << 20 }

    init(session: WebSocketSession) {
        self.session = session
    }

    deinit {
        session.stop(ConveyError.cancelled)
    }

    /// The server's messages, in order: one reader at a time. Ends after the close handshake;
    /// throws how the connection failed. Cancelling the reading task closes the connection with
    /// 1001 and throws `ConveyError.cancelled`. Leaving a loop early leaves the connection open:
    /// the next loop reads on where it stopped.
    public var messages: ResponseStream<WebSocketMessage> {
        ResponseStream(body: nil) { WebSocketMessagesReader(connection: self) }
    }

    /// Sends a text message: queued in order, waiting while the outgoing buffer is full. Throws
    /// `ConveyError.webSocket(.closed, …)` once the connection is closing or closed, and
    /// `ConveyError.cancelled` when the calling task is cancelled while it waits (the message is
    /// then not sent).
    public func send(_ text: String) async throws {
        try await session.send(.text(text))
    }

    /// Sends a binary message, as `send(_:)` sends text.
    public func send(_ data: Data) async throws {
        try await session.send(.binary(data))
    }

    /// Sends a ping and waits for its pong; returns the round trip. When no pong comes within the
    /// task's `pongDeadline`, the connection is taken for dead: it closes with 1001 and this throws
    /// `ConveyError.webSocket(.pongTimeout, …)`.
    @discardableResult
    public func ping() async throws -> Duration {
        try await session.ping()
    }

    /// Closes the connection with `code` (1000–1003, 1007–1014 or 3000–4999) and `reason` (at
    /// most 123 bytes of UTF-8) after the messages queued before, and returns once the close
    /// handshake is over (at most the task's idle timeout after the close went out, when the
    /// server does not answer). Never reconnects after it. Throws
    /// `ConveyError.webSocket(.invalidArgument, …)` for a code or reason that cannot be sent.
    public func close(code: Int = 1000, reason: String = "") async throws {
        try await session.close(code: code, reason: reason)
    }

    /// The subprotocol the server chose among the task's `subprotocols`, if any.
    public var subprotocol: String? { session.subprotocol }

    /// The extensions the server chose, each as its `Sec-WebSocket-Extensions` spelt it, such as
    /// `permessage-deflate; client_max_window_bits=12`.
    public var extensions: [String] { session.extensions }

    /// The handshake's answer: its `101`, its fields, and the URL after redirects.
    public var handshake: ResponseHead? { session.head }

    /// The close code the server sent, once its close frame arrived (1005 when it carried none).
    public var closeCode: Int? { session.peerClose?.code }

    /// The reason the server's close frame carried, once it arrived.
    public var closeReason: String? { session.peerClose?.reason }
}

/// Reads the messages of one loop over `WebSocketConnection.messages`, keeping the connection open.
struct WebSocketMessagesReader: StreamReader {
    let connection: WebSocketConnection

    mutating func next() async throws -> WebSocketMessage? {
        try await connection.session.nextMessage()
    }
}
