/// A WebSocket frame's opcode (RFC 6455 §5.2): what its payload is.
enum WebSocketOpcode: UInt8, Sendable, Hashable {
    /// A later fragment of the message a text or binary frame started.
    case continuation = 0x0
    /// The first frame of a text message.
    case text = 0x1
    /// The first frame of a binary message.
    case binary = 0x2
    /// A close frame.
    case close = 0x8
    /// A ping, which the peer answers with a pong carrying the same payload.
    case ping = 0x9
    /// A pong.
    case pong = 0xA

    /// Whether this is a control frame's opcode (close, ping, pong): at most 125 bytes, never fragmented.
    var isControl: Bool { rawValue & 0x8 != 0 }
}

/// What a frame's header says, once all of it has arrived (RFC 6455 §5.2).
struct WebSocketFrameHeader: Sendable, Hashable {
    /// Whether this is the message's last frame.
    var isFinal: Bool
    /// RSV1, which permessage-deflate sets on a compressed message's first frame.
    var isCompressed: Bool
    /// What the payload is.
    var opcode: WebSocketOpcode
    /// How many payload bytes follow the header.
    var payloadLength: Int
}

/// Encodes client frames (RFC 6455 §5.2): every one masked with a key of its own, its length in
/// the fewest bytes (7, 16 or 64 bits).
enum WebSocketFrameEncoder {
    /// The longest header: 2 bytes, a 64-bit length and the masking key.
    static let maximumHeaderLength = 14

    /// A frame carrying `payload`, masked with a fresh key from the system's random source.
    static func frame(_ opcode: WebSocketOpcode, isFinal: Bool = true, isCompressed: Bool = false,
                      payload: UnsafeRawBufferPointer) -> [UInt8] {
        var random = SystemRandomNumberGenerator()
        let key = random.next() as UInt32
        return frame(opcode, isFinal: isFinal, isCompressed: isCompressed, payload: payload,
                     maskingKey: (UInt8(key >> 24), UInt8(truncatingIfNeeded: key >> 16), UInt8(truncatingIfNeeded: key >> 8), UInt8(truncatingIfNeeded: key)))
    }

    /// A frame carrying `payload`, masked with a fresh key.
    static func frame(_ opcode: WebSocketOpcode, isCompressed: Bool = false, payload: [UInt8]) -> [UInt8] {
        payload.withUnsafeBytes { frame(opcode, isCompressed: isCompressed, payload: $0) }
    }

    /// A frame carrying `payload`, masked with `maskingKey`: for the tests' fixed vectors; the
    /// connection always uses `frame(_:isFinal:isCompressed:payload:)`, which draws a fresh key.
    static func frame(_ opcode: WebSocketOpcode, isFinal: Bool = true, isCompressed: Bool = false,
                      payload: UnsafeRawBufferPointer, maskingKey: (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(maximumHeaderLength + payload.count)
        bytes.append((isFinal ? 0x80 : 0) | (isCompressed ? 0x40 : 0) | opcode.rawValue)
        switch payload.count {
        case 0...125:
            bytes.append(0x80 | UInt8(payload.count))
        case 126...0xFFFF:
            bytes.append(0x80 | 126)
            bytes.append(UInt8(payload.count >> 8))
            bytes.append(UInt8(truncatingIfNeeded: payload.count))
        default:
            bytes.append(0x80 | 127)
            let length = UInt64(payload.count)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
        }
        bytes += [maskingKey.0, maskingKey.1, maskingKey.2, maskingKey.3]
        let payloadStart = bytes.count
        bytes.append(contentsOf: payload)
        bytes.withUnsafeMutableBytes { frame in
            mask(UnsafeMutableRawBufferPointer(rebasing: frame[payloadStart...]), with: maskingKey)
        }
        return bytes
    }

    /// XORs `bytes` with the masking key repeated (RFC 6455 §5.3), eight bytes at a time where it can.
    static func mask(_ bytes: UnsafeMutableRawBufferPointer, with key: (UInt8, UInt8, UInt8, UInt8)) {
        // The key as a number whose lowest byte is the key's first: byte `i` is `key >> (8 * (i % 4))`.
        let key32 = UInt32(key.0) | UInt32(key.1) << 8 | UInt32(key.2) << 16 | UInt32(key.3) << 24
        // Twice over, laid out in memory order, so that a load lines the key's bytes up on either byte order.
        let pattern = UInt64(littleEndian: UInt64(key32) | UInt64(key32) << 32)
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            bytes.storeBytes(of: word ^ pattern, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < bytes.count {
            bytes[offset] ^= UInt8(truncatingIfNeeded: key32 >> (8 * UInt32(offset % 4)))
            offset += 1
        }
    }
}
