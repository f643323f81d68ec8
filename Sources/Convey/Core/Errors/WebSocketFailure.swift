import Foundation

/// What kind of WebSocket failure a `ConveyError.webSocket` is: how the connection could not open,
/// or how it ended without the close handshake both sides agree on.
///
/// The error's `closeCode` is the close code the client sent when it closed the connection for
/// this failure (1002, 1007, 1009, 1001, …), 1006 when the connection ended with no close frame,
/// `nil` when no connection was open; `reason` is the detail, for the log.
public enum WebSocketFailure: String, Sendable, Hashable, CaseIterable {
    /// The server's transport cannot carry WebSockets (`URLSessionTransport` on Linux, a stub, a
    /// transport of the app's own); nothing was sent.
    case unsupportedTransport
    /// A WebSocket task was run as a request (`download()`, `send()`, `stream()`): it opens with
    /// `connect()`. Nothing was sent.
    case notARequest
    /// The server answered 101 but broke the opening handshake's rules: a wrong or missing
    /// `Sec-WebSocket-Accept`, no `Upgrade: websocket`, a subprotocol or extension that was not
    /// offered. Whoever answered did not read this handshake (a cache, a proxy, not a WebSocket server).
    case handshakeFailed
    /// The connection broke RFC 6455 or RFC 7692 once open (a frame the rules forbid, text that is
    /// not UTF-8, compressed data that does not inflate): the client closed it with `closeCode`.
    case protocolError
    /// A message was larger than the task's `maximumMessageSize` (counted after decompression): the
    /// client closed with 1009 at the first byte past the limit.
    case messageTooBig
    /// The connection ended without a close frame (1006): a reset, a server that vanished, a
    /// proxy that dropped it.
    case connectionLost
    /// A ping's pong did not come back within the task's `pongDeadline`: the client took the
    /// connection for dead and closed it with 1001.
    case pongTimeout
    /// The connection is closing or closed: nothing more can be sent.
    case closed
    /// What the app asked to send cannot go on the wire: a close code outside 1000–1003,
    /// 1007–1014 and 3000–4999, or a close reason over 123 bytes of UTF-8.
    case invalidArgument

    /// A sentence fit for a person (`ConveyError.userMessage`).
    var userMessage: String {
        switch self {
        case .unsupportedTransport: "This app can't open a live connection to the server here."
        case .notARequest, .invalidArgument: "The request couldn't be prepared."
        case .handshakeFailed: "The server didn't accept the live connection."
        case .protocolError: "The server sent something that couldn't be understood, so the live connection was closed."
        case .messageTooBig: "The server sent a message too large to accept."
        case .connectionLost: "The live connection to the server was lost. Please try again."
        case .pongTimeout: "The server stopped answering, so the live connection was closed."
        case .closed: "The live connection to the server is closed."
        }
    }

    /// What happened, for the log line.
    var logPhrase: String {
        switch self {
        case .unsupportedTransport: "WebSockets unsupported by the transport"
        case .notARequest: "A WebSocket task was run as a request"
        case .handshakeFailed: "WebSocket handshake failed"
        case .protocolError: "WebSocket protocol error"
        case .messageTooBig: "WebSocket message too big"
        case .connectionLost: "WebSocket connection lost"
        case .pongTimeout: "WebSocket pong overdue"
        case .closed: "WebSocket closed"
        case .invalidArgument: "WebSocket close refused"
        }
    }
}
