/// How the server broke RFC 6455 or RFC 7692 once the connection was open, each with the close
/// code the client answers it with (`closeCode`).
///
/// The client then fails the connection (RFC 6455 §7.1.7): it sends a close frame with that code
/// and stops reading. `connectionEnded` is the exception: the connection is already gone, so its
/// code, 1006, is only reported, never sent.
enum WebSocketProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A frame set reserved bits (`bits`, the RSV1–RSV3 bits as the frame's first byte holds them,
    /// 0x70 mask) that no negotiated extension defines for it: RSV2 or RSV3 at all, RSV1 without
    /// permessage-deflate or on a control frame.
    case reservedBitsSet(bits: UInt8, opcode: UInt8)
    /// A continuation frame set RSV1: permessage-deflate marks only a message's first frame.
    case compressedContinuationFrame
    /// A frame's opcode is none that RFC 6455 defines (0x3–0x7, 0xB–0xF).
    case unknownOpcode(UInt8)
    /// The server masked a frame; only clients mask (RFC 6455 §5.1).
    case maskedFrame(opcode: UInt8)
    /// A control frame announced more than 125 bytes of payload (RFC 6455 §5.5).
    case controlFrameTooLong(opcode: UInt8, length: UInt64)
    /// A control frame was not final: control frames cannot be fragmented (RFC 6455 §5.5).
    case fragmentedControlFrame(opcode: UInt8)
    /// A 64-bit payload length with its most significant bit set (RFC 6455 §5.2).
    case frameLengthOutOfRange(UInt64)
    /// A continuation frame arrived with no fragmented message to continue.
    case continuationWithoutMessage
    /// A text or binary frame (`opcode`) arrived while a fragmented message was still open.
    case newMessageInsideFragmentedMessage(opcode: UInt8)
    /// A close frame carried a code that may not travel on the wire (1005, 1006, 1015, 0–999,
    /// 1004, an unassigned one, 5000 and above).
    case invalidCloseCode(UInt16)
    /// A close frame's payload was one byte: half a close code.
    case closePayloadOfOneByte
    /// A close frame's reason was not UTF-8.
    case invalidUTF8InCloseReason
    /// A text message was not UTF-8: the first bad byte is at `byteOffset` in the message
    /// (after decompression), or the message ended inside a character.
    case invalidUTF8InText(byteOffset: Int)
    /// A compressed message's data could not be inflated: `reason` is zlib's.
    case invalidCompressedData(reason: String)
    /// A message grew past the maximum size (`limit`, in bytes, after decompression).
    case messageTooBig(limit: Int)
    /// The connection ended without a close frame; `midFrame` says it ended inside a frame.
    case connectionEnded(midFrame: Bool)

    /// The close code this failure is answered with.
    var closeCode: WebSocketCloseCode {
        switch self {
        case .reservedBitsSet, .compressedContinuationFrame, .unknownOpcode, .maskedFrame, .controlFrameTooLong,
             .fragmentedControlFrame, .frameLengthOutOfRange, .continuationWithoutMessage,
             .newMessageInsideFragmentedMessage, .invalidCloseCode, .closePayloadOfOneByte:
            .protocolError
        case .invalidUTF8InCloseReason, .invalidUTF8InText, .invalidCompressedData:
            .invalidFramePayloadData
        case .messageTooBig:
            .messageTooBig
        case .connectionEnded:
            .abnormalClosure
        }
    }

    /// What the server did, in a sentence.
    var description: String {
        switch self {
        case .reservedBitsSet(let bits, let opcode):
            "the server set reserved bits 0x\(hex(bits)) on a frame with opcode 0x\(hex(opcode)) that no negotiated extension defines"
        case .compressedContinuationFrame:
            "the server set RSV1 on a continuation frame; permessage-deflate marks only a message's first frame"
        case .unknownOpcode(let opcode):
            "the server sent a frame with opcode 0x\(hex(opcode)), which RFC 6455 does not define"
        case .maskedFrame(let opcode):
            "the server masked a frame (opcode 0x\(hex(opcode))); only clients mask their frames"
        case .controlFrameTooLong(let opcode, let length):
            "the server sent a control frame (opcode 0x\(hex(opcode))) of \(length) bytes; control frames carry at most 125"
        case .fragmentedControlFrame(let opcode):
            "the server fragmented a control frame (opcode 0x\(hex(opcode))); control frames must be final"
        case .frameLengthOutOfRange(let length):
            "the server sent a frame length of \(length) bytes, which sets the 64-bit length's most significant bit"
        case .continuationWithoutMessage:
            "the server sent a continuation frame with no fragmented message to continue"
        case .newMessageInsideFragmentedMessage(let opcode):
            "the server started a new message (opcode 0x\(hex(opcode))) before finishing its fragmented one"
        case .invalidCloseCode(let code):
            "the server's close frame carried code \(WebSocketCloseCode(rawValue: code)), which may not be sent on the wire"
        case .closePayloadOfOneByte:
            "the server's close frame carried one byte: a close code needs two"
        case .invalidUTF8InCloseReason:
            "the server's close reason is not UTF-8"
        case .invalidUTF8InText(let offset):
            "the server's text message is not UTF-8 (at byte \(offset))"
        case .invalidCompressedData(let reason):
            "the server's compressed message could not be inflated: \(reason)"
        case .messageTooBig(let limit):
            "the server's message is larger than the maximum of \(limit) bytes"
        case .connectionEnded(let midFrame):
            midFrame ? "the connection ended in the middle of a frame, without a close frame"
                : "the connection ended without a close frame"
        }
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
