import Foundation

/// A WebSocket, declared like every other task: a path under the server's remote, query, fields
/// from the server's `headers(for:)`, hooks, retries and credential refresh. `connect()` opens it.
///
/// ```swift
/// struct ChatSocket: WebSocketTask {
///     let room: String
///     var path: String { "chat" }
///     var queryParameters: [String: String]? { ["room": room] }
///     var subprotocols: [String] { ["chat"] }
///     var pingInterval: Duration? { .seconds(30) }
/// }
///
/// let connection = try await ChatSocket(room: "general").connect()
/// ```
///
/// The opening handshake is a run like any other: a GET through the server's and the task's
/// steps, with the trace context, echoed and recorded as an attempt. Only `101 Switching
/// Protocols` comes back (`statusRule`): any other status is the task's `HTTPError`, and a 401
/// runs the server's credential refresh and tries again. The remote's `http` is `ws`, `https` is
/// `wss`. See Docs/websockets.md.
///
/// A WebSocket task is not a request: `download()` and `send()` are unavailable, and running it
/// any other way than `connect()` (`stream()`, or through `any DownloadingTask`) fails with
/// `ConveyError.webSocket(.notARequest, …)` before anything is sent.
public protocol WebSocketTask: DownloadingTask {
    /// The subprotocols offered in `Sec-WebSocket-Protocol`, in order of preference: each an
    /// HTTP token. The server's choice is `WebSocketConnection.subprotocol`. Default: none.
    var subprotocols: [String] { get }
    /// The largest message accepted from the server, in bytes after decompression: a larger one
    /// closes the connection with 1009 at its first byte past the limit. Default: 16 MiB.
    var maximumMessageSize: Int { get }
    /// Whether permessage-deflate (RFC 7692) is offered: messages compressed both ways, when the
    /// server agrees. Default: `true`.
    var offersCompression: Bool { get }
    /// How often the connection pings the server while it is open: a pong that does not come
    /// within `pongDeadline` closes the connection with 1001. Default: `nil`, no pings.
    var pingInterval: Duration? { get }
    /// How long a ping waits for its pong, from the interval or `ping()`. Default: 10 seconds.
    var pongDeadline: Duration { get }
    /// Whether and how a connection that drops is opened again: the policy's `maxAttempts` - 1
    /// reconnections in a row at most, its `baseDelay`, `maxDelay` and `jitter` as the backoff
    /// between them; a handshake that fails for a reason the policy does not take as transient
    /// ends them. A connection reconnects after a drop (1006), a pong that did not come, or the
    /// server closing with 1001 or 1011–1014; never after a close the app asked for, a protocol
    /// error, a message too big, a normal closure, an application's own code, cancellation or the
    /// total timeout. Default: `nil`, no reconnection.
    var reconnection: RetryPolicy? { get }
}

extension WebSocketTask {
    public var subprotocols: [String] { [] }
    public var maximumMessageSize: Int { 16 << 20 }
    public var offersCompression: Bool { true }
    public var pingInterval: Duration? { nil }
    public var pongDeadline: Duration { .seconds(10) }
    public var reconnection: RetryPolicy? { nil }
    /// Only `101 Switching Protocols` comes back: every other status is an `HTTPError`.
    public var statusRule: StatusRule {
        StatusRule(throwingClasses: [.info, .success, .redirect, .clientError, .serverError, .unknown], returnedCodes: [101])
    }

    /// Opens the connection: runs the handshake as a run of the task (hooks, the status rule,
    /// retries, credential refresh), and returns once the server switched protocols and the
    /// handshake checked out. Throws `HTTPError` for any other status, and `ConveyError` for the
    /// rest (`.webSocket(.handshakeFailed, …)` for a 101 that breaks the handshake's rules,
    /// `.webSocket(.unsupportedTransport, …)` on a transport that carries no WebSocket).
    ///
    /// - Parameters:
    ///   - totalTimeout: the connection's whole lifetime, reconnections included: when it passes,
    ///     the connection closes with 1001 and `messages` throws `ConveyError.totalTimedOut`. It
    ///     replaces the task's total timeout, which otherwise covers only the handshake.
    ///   - bufferSize: how many bytes of messages may wait each way (see `WebSocketConnection`).
    public nonisolated func connect(totalTimeout: Duration? = nil, bufferSize: Int = WebSocketConnection.defaultBufferSize)
        async throws -> WebSocketConnection {
        let settings = await WebSocketSettings(task: self, totalTimeout: totalTimeout, bufferSize: bufferSize)
        let session = WebSocketSession(settings: settings) { delivery in
            try await TaskRunner(task: self, start: delivery.start).run(delivery).payload
        }
        try await session.open()
        return WebSocketConnection(session: session)
    }

    /// A WebSocket task opens with `connect()`.
    @available(*, unavailable, message: "a WebSocketTask opens with connect()")
    @discardableResult
    public nonisolated func download() async throws -> ServerResponse<DownloadPayload> {
        try await TaskRunner(task: self).run()
    }

    /// A WebSocket task opens with `connect()`.
    @available(*, unavailable, message: "a WebSocketTask opens with connect()")
    public nonisolated func send() async throws {
        _ = try await TaskRunner(task: self).run()
    }
}
