/// What the server sent, a message or a control frame at a time.
enum WebSocketEvent: Sendable, Hashable {
    /// A whole text message, checked as UTF-8.
    case text(String)
    /// A whole binary message.
    case binary([UInt8])
    /// A ping with its payload (at most 125 bytes); the connection answers it by itself.
    case ping([UInt8])
    /// A pong with its payload.
    case pong([UInt8])
    /// The server's close frame: its code (`nil` when it carried none, which RFC 6455 reports
    /// as 1005) and its reason.
    case close(code: WebSocketCloseCode?, reason: String)
}

/// Turns the server's frames into messages (RFC 6455 §5.4, RFC 7692 §6): fragments reassembled
/// with control frames between them, compressed messages inflated, text checked as UTF-8 as it
/// arrives, and a message's size held to a maximum as it grows, so memory stays bounded
/// whatever the server sends.
///
/// Every rule is checked at the earliest byte that can break it: a frame too large for the
/// maximum fails at its header, invalid UTF-8 at its first bad byte, an inflating message at the
/// first byte past the limit. Noncopyable: it owns the inflater's zlib state.
struct WebSocketMessageReader: ~Copyable {
    /// The largest message, in bytes after decompression.
    let maximumMessageSize: Int
    private var decoder: WebSocketFrameDecoder
    private let inflater: PerMessageDeflateDecompressor?
    /// The data message being read, from its first frame to its last.
    private var message: OpenMessage?
    /// The message's bytes so far (inflated when it is compressed).
    private var messageBytes: [UInt8] = []
    private var utf8 = UTF8StreamValidator()
    /// Whether the frame being read is a control frame, and which.
    private var controlOpcode: WebSocketOpcode?
    /// Whether the data frame being read is its message's last.
    private var frameIsFinal = false
    private var controlPayload: [UInt8] = []
    /// Whether the server's close frame arrived; nothing after it is read.
    private(set) var closeReceived = false

    /// A message being read.
    private struct OpenMessage {
        var isText: Bool
        var isCompressed: Bool
        /// Payload bytes received for a compressed message, before inflating.
        var compressedBytes = 0
    }

    /// A reader for a connection that negotiated `deflate` (or nothing, when `nil`).
    init(maximumMessageSize: Int, deflate: PerMessageDeflateParameters?) throws(PerMessageDeflateFailure) {
        self.maximumMessageSize = maximumMessageSize
        decoder = WebSocketFrameDecoder(allowsCompression: deflate != nil)
        inflater = try deflate.map { (parameters) throws(PerMessageDeflateFailure) in
            try PerMessageDeflateDecompressor(windowBits: parameters.serverMaxWindowBits, noContextTakeover: parameters.serverNoContextTakeover)
        }
    }

    /// Whether the bytes so far end inside a frame.
    var isInsideFrame: Bool { decoder.isInsideFrame }

    /// The most room a message's buffer ever had, in bytes: what reading messages cost in memory
    /// at its peak, which the maximum size bounds.
    private(set) var largestMessageBuffer = 0

    /// How many compressed payload bytes a message may carry: its limit, plus what deflate may add
    /// to data that does not compress (fixed Huffman codes spend up to 9 bits on a byte).
    private var compressedLimit: Int { maximumMessageSize + maximumMessageSize / 8 + 1024 }

    /// Reads `input`, handing each message and control frame to `deliver` as it completes.
    /// Throws at the first byte that breaks a rule; once the server's close frame has arrived,
    /// whatever follows it is ignored.
    mutating func read(_ input: UnsafeRawBufferPointer, _ deliver: (WebSocketEvent) -> Void) throws(WebSocketProtocolError) {
        guard !closeReceived else { return }
        // The decoder works on a copy (a plain value, no allocation) so that its pieces can
        // change the rest of the reader while it runs.
        var decoder = self.decoder
        defer { self.decoder = decoder }
        do {
            try decoder.decode(input) { (part) throws(WebSocketProtocolError) in
                guard !closeReceived else { return }
                switch part {
                case .header(let header): try begin(header)
                case .payload(let bytes): try take(bytes)
                case .frameEnd: try end(deliver)
                }
            }
        } catch where closeReceived {
            // Bytes after the close frame: RFC 6455 §5.5.1 says there are none, and none are read.
        }
    }

    private mutating func begin(_ header: WebSocketFrameHeader) throws(WebSocketProtocolError) {
        if header.opcode.isControl {
            controlOpcode = header.opcode
            controlPayload.removeAll(keepingCapacity: true)
            return
        }
        controlOpcode = nil
        frameIsFinal = header.isFinal
        if header.opcode == .continuation {
            guard message != nil else { throw .continuationWithoutMessage }
        } else {
            guard message == nil else { throw .newMessageInsideFragmentedMessage(opcode: header.opcode.rawValue) }
            message = OpenMessage(isText: header.opcode == .text, isCompressed: header.isCompressed)
            utf8 = UTF8StreamValidator()
            // A whole uncompressed message in one frame: its size is known, so allocate it once.
            if header.isFinal, !header.isCompressed, header.payloadLength <= maximumMessageSize {
                messageBytes.reserveCapacity(header.payloadLength)
                largestMessageBuffer = max(largestMessageBuffer, messageBytes.capacity)
            }
        }
        guard let message else { return }
        let total = message.isCompressed ? message.compressedBytes + header.payloadLength : messageBytes.count + header.payloadLength
        if total > (message.isCompressed ? compressedLimit : maximumMessageSize) { throw .messageTooBig(limit: maximumMessageSize) }
    }

    private mutating func take(_ bytes: UnsafeRawBufferPointer) throws(WebSocketProtocolError) {
        if controlOpcode != nil {
            controlPayload.append(contentsOf: UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count))
            return
        }
        guard message?.isCompressed == true, let inflater else { return try append(bytes) }
        message?.compressedBytes += bytes.count
        _ = try inflater.inflate(bytes, allowance: maximumMessageSize - messageBytes.count) { (slice) throws(WebSocketProtocolError) in
            try append(slice)
        }
    }

    private mutating func end(_ deliver: (WebSocketEvent) -> Void) throws(WebSocketProtocolError) {
        if let opcode = controlOpcode {
            controlOpcode = nil
            switch opcode {
            case .ping: deliver(.ping(controlPayload))
            case .pong: deliver(.pong(controlPayload))
            default:
                let (code, reason) = try Self.parseClose(controlPayload)
                closeReceived = true
                deliver(.close(code: code, reason: reason))
            }
            return
        }
        guard frameIsFinal, let finished = message else { return }
        if finished.isCompressed, let inflater {
            _ = try inflater.finishMessage(allowance: maximumMessageSize - messageBytes.count) { (slice) throws(WebSocketProtocolError) in
                try append(slice)
            }
        }
        message = nil
        let bytes = messageBytes
        messageBytes = []
        if finished.isText {
            guard utf8.isAtCharacterBoundary else { throw .invalidUTF8InText(byteOffset: bytes.count) }
            deliver(.text(String(decoding: bytes, as: UTF8.self)))
        } else {
            deliver(.binary(bytes))
        }
    }

    /// Adds bytes to the message: refused past the maximum, checked as UTF-8 for text, and the
    /// buffer grown by doubling, never past the maximum.
    private mutating func append(_ bytes: UnsafeRawBufferPointer) throws(WebSocketProtocolError) {
        let needed = messageBytes.count + bytes.count
        guard needed <= maximumMessageSize else { throw .messageTooBig(limit: maximumMessageSize) }
        if message?.isText == true, let bad = utf8.validate(bytes) { throw .invalidUTF8InText(byteOffset: messageBytes.count + bad) }
        if needed > messageBytes.capacity {
            messageBytes.reserveCapacity(min(maximumMessageSize, max(needed, messageBytes.capacity * 2)))
            largestMessageBuffer = max(largestMessageBuffer, messageBytes.capacity)
        }
        messageBytes.append(contentsOf: UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count))
    }

    /// Drops the message being read: after a failure, nothing of it is needed.
    mutating func discardMessage() {
        message = nil
        messageBytes = []
    }

    /// A close frame's code and reason (RFC 6455 §5.5.1): none, or two bytes of code followed by
    /// a UTF-8 reason.
    static func parseClose(_ payload: [UInt8]) throws(WebSocketProtocolError) -> (WebSocketCloseCode?, String) {
        if payload.isEmpty { return (nil, "") }
        guard payload.count >= 2 else { throw .closePayloadOfOneByte }
        let code = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isValidOnTheWire else { throw .invalidCloseCode(code.rawValue) }
        let reason = payload[2...]
        var validator = UTF8StreamValidator()
        let invalid = reason.withUnsafeBytes { validator.validate($0) }
        guard invalid == nil, validator.isAtCharacterBoundary else { throw .invalidUTF8InCloseReason }
        return (code, String(decoding: reason, as: UTF8.self))
    }
}
