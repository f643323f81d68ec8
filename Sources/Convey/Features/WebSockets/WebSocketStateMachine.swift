/// A client's WebSocket connection as a state machine without I/O or clock (RFC 6455 §5–§7):
/// fed the bytes the server sent, it says what arrived and what to write back; asked to send, it
/// gives the bytes to write. Whoever owns the socket moves the bytes; timing (ping deadlines,
/// how long to wait for the server's close) is theirs too.
///
/// ```swift
/// var machine = try WebSocketStateMachine(deflate: negotiated.deflate)
/// try socket.write(machine.sendText("hello"))
/// let receipt = machine.receive(bytesRead)
/// try socket.write(receipt.bytesToWrite)       // pongs, the close reply, or the failing close
/// for event in receipt.events { … }
/// if let failure = receipt.failure { … }        // the server broke the protocol: close the socket
/// ```
///
/// The close handshake (RFC 6455 §7): `open` until either side sends a close frame; `closing`
/// while the client's close waits for the server's; `closed` once both were exchanged (a close
/// from the server is answered at once, echoing its code), or the connection failed. In
/// `closing` the client sends nothing more of its own but still reads messages and answers pings.
/// Noncopyable: it owns the zlib state of permessage-deflate.
struct WebSocketStateMachine: ~Copyable {
    /// Where the close handshake stands.
    enum State: Sendable, Hashable {
        /// Both sides may send.
        case open
        /// The client sent its close frame and waits for the server's.
        case closing
        /// Both close frames were exchanged, or the connection failed: nothing more is sent or read.
        case closed
    }

    /// A close frame's content.
    struct Close: Sendable, Hashable {
        /// The code, `nil` for a close frame without one.
        var code: WebSocketCloseCode?
        /// The reason, empty when there is none.
        var reason: String
    }

    /// What the machine made of the bytes it was fed.
    struct Receipt: Sendable, Hashable {
        /// What arrived, in order.
        var events: [WebSocketEvent] = []
        /// What to write to the server now: a pong per ping, the reply to the server's close, or
        /// the close frame that fails the connection.
        var bytesToWrite: [UInt8] = []
        /// How the server broke the protocol, when it did: the connection is then closed, and
        /// `bytesToWrite` ends with the close frame carrying `failure.closeCode`, unless the
        /// client had sent its close already. Whoever owns the socket closes it after writing.
        var failure: WebSocketProtocolError?
    }

    /// Where the close handshake stands.
    private(set) var state = State.open
    /// The close frame the client sent, once it sent one.
    private(set) var sentClose: Close?
    /// The close frame the server sent, once it arrived.
    private(set) var receivedClose: Close?
    /// How the connection failed, when it did.
    private(set) var failure: WebSocketProtocolError?
    private var reader: WebSocketMessageReader
    private let compressor: PerMessageDeflateCompressor?

    /// The machine of a connection that just opened, with the permessage-deflate parameters the
    /// handshake negotiated (`nil` for none) and the largest message it accepts, in bytes after
    /// decompression (16 MiB unless said otherwise). Throws when zlib cannot start.
    init(deflate: PerMessageDeflateParameters?, maximumMessageSize: Int = 16 << 20) throws(PerMessageDeflateFailure) {
        // zlib cannot make an 8-bit window: a client held to 8 sends uncompressed messages.
        let compressor: PerMessageDeflateCompressor? = if let deflate, deflate.clientMaxWindowBits >= 9 {
            try PerMessageDeflateCompressor(windowBits: deflate.clientMaxWindowBits, noContextTakeover: deflate.clientNoContextTakeover)
        } else {
            nil
        }
        // The reader last, once nothing else can throw: a noncopyable member cannot be left half made.
        reader = try WebSocketMessageReader(maximumMessageSize: maximumMessageSize, deflate: deflate)
        self.compressor = compressor
    }

    /// The largest message accepted, in bytes after decompression.
    var maximumMessageSize: Int { reader.maximumMessageSize }

    /// The most room a message's buffer ever had, in bytes: reading's peak memory, which the
    /// maximum message size bounds.
    var largestMessageBuffer: Int { reader.largestMessageBuffer }

    // MARK: Receiving

    /// Reads bytes the server sent. Pings are answered and a close is replied to in the receipt's
    /// bytes; a protocol violation closes the connection. Once closed, bytes are ignored.
    mutating func receive(_ bytes: UnsafeRawBufferPointer) -> Receipt {
        var receipt = Receipt()
        guard state != .closed else { return receipt }
        var events: [WebSocketEvent] = []
        var failure: WebSocketProtocolError?
        do {
            try reader.read(bytes) { events.append($0) }
        } catch {
            failure = error
        }
        for event in events {
            switch event {
            case .ping(let payload):
                // Nothing is read after the server's close, so every ping here is owed its pong (RFC 6455 §5.5.2).
                receipt.bytesToWrite += WebSocketFrameEncoder.frame(.pong, payload: payload)
            case .close(let code, let reason):
                receivedClose = Close(code: code, reason: reason)
                if state == .open {
                    // Echo the server's code (RFC 6455 §5.5.1); a close without one is answered without one.
                    let reply = Close(code: code, reason: "")
                    sentClose = reply
                    receipt.bytesToWrite += Self.closeFrame(reply)
                }
                state = .closed
            default:
                break
            }
        }
        receipt.events = events
        if let failure {
            receipt.failure = failure
            fail(failure, into: &receipt)
        }
        return receipt
    }

    /// Reads bytes the server sent, from an array.
    mutating func receive(_ bytes: [UInt8]) -> Receipt {
        bytes.withUnsafeBytes { receive($0) }
    }

    /// The connection ended (the socket read end of input): `nil` when that was the clean end
    /// of the close handshake, otherwise the failure it is (1006, never sent), which also closes
    /// the machine.
    mutating func endOfInput() -> WebSocketProtocolError? {
        if receivedClose != nil { return nil }
        if let failure { return failure }
        let error = WebSocketProtocolError.connectionEnded(midFrame: reader.isInsideFrame)
        failure = error
        reader.discardMessage()
        state = .closed
        return error
    }

    private mutating func fail(_ error: WebSocketProtocolError, into receipt: inout Receipt) {
        failure = error
        reader.discardMessage()
        if state == .open {
            let close = Close(code: error.closeCode, reason: "")
            sentClose = close
            receipt.bytesToWrite += Self.closeFrame(close)
        }
        state = .closed
    }

    // MARK: Sending

    /// A text message's frame, compressed when permessage-deflate was negotiated.
    mutating func sendText(_ text: String) throws(WebSocketSendError) -> [UInt8] {
        var text = text
        // withUTF8 rethrows untyped errors: the typed one travels out in a Result.
        return try text.withUTF8 { bytes in
            Result { () throws(WebSocketSendError) in try message(.text, UnsafeRawBufferPointer(bytes)) }
        }.get()
    }

    /// A binary message's frame, compressed when permessage-deflate was negotiated.
    mutating func sendBinary(_ bytes: UnsafeRawBufferPointer) throws(WebSocketSendError) -> [UInt8] {
        try message(.binary, bytes)
    }

    /// A binary message's frame, from an array.
    mutating func sendBinary(_ bytes: [UInt8]) throws(WebSocketSendError) -> [UInt8] {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(WebSocketSendError) in try message(.binary, buffer) }
        }.get()
    }

    /// A ping frame carrying `payload` (at most 125 bytes), which the server answers with a pong
    /// carrying the same.
    mutating func sendPing(_ payload: [UInt8] = []) throws(WebSocketSendError) -> [UInt8] {
        try control(.ping, payload)
    }

    /// An unsolicited pong (RFC 6455 §5.5.3: a one-way heartbeat).
    mutating func sendPong(_ payload: [UInt8] = []) throws(WebSocketSendError) -> [UInt8] {
        try control(.pong, payload)
    }

    /// The client's close frame: `code` (one that may travel on the wire; `nil` sends a close
    /// without code, and then no reason) and `reason` (at most 123 bytes of UTF-8). Moves to
    /// `closing`, where the client waits for the server's close.
    mutating func close(code: WebSocketCloseCode? = .normalClosure, reason: String = "") throws(WebSocketSendError) -> [UInt8] {
        guard state == .open else { throw .notOpen(state) }
        if let code, !code.isValidOnTheWire { throw .invalidCloseCode(code) }
        if code == nil, !reason.isEmpty { throw .reasonWithoutCode }
        guard reason.utf8.count <= 123 else { throw .closeReasonTooLong(bytes: reason.utf8.count) }
        let close = Close(code: code, reason: reason)
        sentClose = close
        state = .closing
        return Self.closeFrame(close)
    }

    private mutating func message(_ opcode: WebSocketOpcode, _ payload: UnsafeRawBufferPointer) throws(WebSocketSendError) -> [UInt8] {
        guard state == .open else { throw .notOpen(state) }
        guard let compressor else { return WebSocketFrameEncoder.frame(opcode, payload: payload) }
        let compressed: [UInt8]
        do { compressed = try compressor.compress(payload) } catch { throw .compressionFailed(error.reason) }
        return compressed.withUnsafeBytes { WebSocketFrameEncoder.frame(opcode, isCompressed: true, payload: $0) }
    }

    private mutating func control(_ opcode: WebSocketOpcode, _ payload: [UInt8]) throws(WebSocketSendError) -> [UInt8] {
        guard state == .open else { throw .notOpen(state) }
        guard payload.count <= 125 else { throw .controlPayloadTooLong(bytes: payload.count) }
        return WebSocketFrameEncoder.frame(opcode, payload: payload)
    }

    private static func closeFrame(_ close: Close) -> [UInt8] {
        var payload: [UInt8] = []
        if let code = close.code {
            payload = [UInt8(code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)] + Array(close.reason.utf8)
        }
        return WebSocketFrameEncoder.frame(.close, payload: payload)
    }
}

/// Why the client could not send what it was asked to.
enum WebSocketSendError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The connection is closing or closed: after its close frame, the client sends nothing of its own.
    case notOpen(WebSocketStateMachine.State)
    /// The close code may not travel on the wire (1005, 1006, 1015, unassigned codes).
    case invalidCloseCode(WebSocketCloseCode)
    /// A close reason longer than the 123 bytes a close frame has room for.
    case closeReasonTooLong(bytes: Int)
    /// A close reason without a code: a close frame carries a reason only after a code.
    case reasonWithoutCode
    /// A ping or pong payload longer than 125 bytes.
    case controlPayloadTooLong(bytes: Int)
    /// zlib could not compress the message: `reason` is zlib's.
    case compressionFailed(String)

    /// What was refused, in a sentence.
    var description: String {
        switch self {
        case .notOpen(let state):
            "the WebSocket connection is \(state == .closing ? "closing" : "closed"): nothing more can be sent"
        case .invalidCloseCode(let code):
            "the close code \(code) may not be sent: use 1000–1003, 1007–1014 or 3000–4999"
        case .closeReasonTooLong(let bytes):
            "the close reason is \(bytes) bytes of UTF-8; a close frame has room for 123"
        case .reasonWithoutCode:
            "a close reason needs a close code"
        case .controlPayloadTooLong(let bytes):
            "a ping or pong carries at most 125 bytes, not \(bytes)"
        case .compressionFailed(let reason):
            "the message could not be compressed: \(reason)"
        }
    }
}
