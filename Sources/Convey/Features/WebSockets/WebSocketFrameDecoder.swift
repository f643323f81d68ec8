/// Reads the server's frames (RFC 6455 §5.2) from bytes fed in pieces of any size, one byte at a
/// time included, and checks each rule a frame must keep by itself as soon as the bytes that
/// break it arrive.
///
/// It holds at most one header (14 bytes): payload bytes are handed on as they arrive, so what a
/// frame's payload costs is up to the receiver (`WebSocketMessageReader` bounds it). The rules
/// about messages (continuations, interleaving) are the receiver's too.
struct WebSocketFrameDecoder: Sendable {
    /// A piece of a frame, in the order they arrive.
    enum Part {
        /// A frame's header, whole and checked.
        case header(WebSocketFrameHeader)
        /// The next payload bytes of the frame whose header came last; valid only during the call.
        case payload(UnsafeRawBufferPointer)
        /// The frame's last payload byte has arrived (at once after the header for an empty frame).
        case frameEnd
    }

    /// Whether permessage-deflate was negotiated: RSV1 may then mark a message's first frame.
    let allowsCompression: Bool
    /// The header bytes received so far, while a header is incomplete: room for the longest
    /// (14 bytes) in place, so that the decoder is a plain value, cheap to copy.
    private var headerStorage: (UInt64, UInt64) = (0, 0)
    private var headerCount = 0
    /// How many payload bytes of the current frame are still to come; `nil` while reading a header.
    private var remainingPayload: Int?

    /// A decoder at the start of a frame.
    init(allowsCompression: Bool) {
        self.allowsCompression = allowsCompression
    }

    /// Whether the bytes so far end inside a frame.
    var isInsideFrame: Bool { remainingPayload != nil || headerCount > 0 }

    /// Reads `input`, handing each piece to `receive` in order. Throws at the first byte that
    /// breaks a frame rule, or what `receive` throws; the decoder must not be fed again after that.
    mutating func decode(_ input: UnsafeRawBufferPointer,
                         _ receive: (Part) throws(WebSocketProtocolError) -> Void) throws(WebSocketProtocolError) {
        var offset = 0
        while offset < input.count {
            if let remaining = remainingPayload {
                let length = min(remaining, input.count - offset)
                try receive(.payload(UnsafeRawBufferPointer(rebasing: input[offset..<(offset + length)])))
                offset += length
                try finishPayload(consumed: length, receive)
                continue
            }
            let byte = input[offset]
            let position = headerCount
            withUnsafeMutableBytes(of: &headerStorage) { $0[position] = byte }
            headerCount += 1
            offset += 1
            guard let header = try headerIfComplete() else { continue }
            headerCount = 0
            remainingPayload = header.payloadLength
            try receive(.header(header))
            try finishPayload(consumed: 0, receive)
        }
    }

    /// Counts `consumed` payload bytes off the current frame and reports its end when it comes.
    private mutating func finishPayload(consumed: Int,
                                        _ receive: (Part) throws(WebSocketProtocolError) -> Void) throws(WebSocketProtocolError) {
        guard let remaining = remainingPayload else { return }
        remainingPayload = remaining - consumed
        guard remaining - consumed == 0 else { return }
        remainingPayload = nil
        try receive(.frameEnd)
    }

    /// The header byte at `index`, which has arrived.
    private func headerByte(_ index: Int) -> UInt8 {
        withUnsafeBytes(of: headerStorage) { $0[index] }
    }

    /// The header, once all of it has arrived; checks each byte's rules as it arrives.
    private func headerIfComplete() throws(WebSocketProtocolError) -> WebSocketFrameHeader? {
        let first = headerByte(0)
        let rawOpcode = first & 0x0F
        guard let opcode = WebSocketOpcode(rawValue: rawOpcode) else { throw .unknownOpcode(rawOpcode) }
        let reserved = first & 0x70
        if reserved != 0 {
            // RSV1 is permessage-deflate's, on a data message's first frame only; RSV2 and RSV3 are nobody's.
            let compressionBitAlone = reserved == 0x40 && allowsCompression
            guard compressionBitAlone, !opcode.isControl else { throw .reservedBitsSet(bits: reserved, opcode: rawOpcode) }
            guard opcode != .continuation else { throw .compressedContinuationFrame }
        }
        let isFinal = first & 0x80 != 0
        if opcode.isControl, !isFinal { throw .fragmentedControlFrame(opcode: rawOpcode) }
        guard headerCount >= 2 else { return nil }

        let second = headerByte(1)
        if second & 0x80 != 0 { throw .maskedFrame(opcode: rawOpcode) }
        let shortLength = second & 0x7F
        if opcode.isControl, shortLength > 125 { throw .controlFrameTooLong(opcode: rawOpcode, length: UInt64(shortLength)) }
        let lengthBytes = shortLength == 127 ? 8 : shortLength == 126 ? 2 : 0
        guard headerCount == 2 + lengthBytes else { return nil }

        var length = UInt64(shortLength)
        if lengthBytes > 0 {
            length = 0
            for index in 2..<headerCount { length = length << 8 | UInt64(headerByte(index)) }
        }
        guard length < 1 << 63, let payloadLength = Int(exactly: length) else { throw .frameLengthOutOfRange(length) }
        return WebSocketFrameHeader(isFinal: isFinal, isCompressed: reserved != 0, opcode: opcode, payloadLength: payloadLength)
    }
}
