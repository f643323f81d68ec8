import Foundation
import Testing
@testable import Convey

/// Frames as a server sends them, and the client's frames read back, for the WebSocket tests.
enum WebSocketTestFrames {
    /// A server frame: unmasked unless `maskingKey` is given, with the length in the fewest bytes.
    static func server(_ opcode: UInt8, _ payload: [UInt8] = [], isFinal: Bool = true, reserved: UInt8 = 0,
                       maskingKey: [UInt8]? = nil) -> [UInt8] {
        var frame: [UInt8] = [(isFinal ? 0x80 : 0) | reserved | opcode]
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        switch payload.count {
        case 0...125: frame.append(maskBit | UInt8(payload.count))
        case 126...0xFFFF: frame += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: frame += [maskBit | 127] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(payload.count) >> (8 * UInt64($0))) }
        }
        guard let maskingKey else { return frame + payload }
        return frame + maskingKey + payload.enumerated().map { $0.element ^ maskingKey[$0.offset % 4] }
    }

    /// A server text frame.
    static func server(text: String, isFinal: Bool = true) -> [UInt8] {
        server(0x1, Array(text.utf8), isFinal: isFinal)
    }

    /// A close frame's payload: the code, then the reason's bytes.
    static func closePayload(_ code: UInt16, _ reason: [UInt8] = []) -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + reason
    }

    /// A client frame, unmasked.
    struct ClientFrame: Equatable, CustomStringConvertible {
        var isFinal: Bool
        var isCompressed: Bool
        var opcode: UInt8
        var maskingKey: [UInt8]
        var payload: [UInt8]

        var description: String { "opcode \(opcode) fin \(isFinal) rsv1 \(isCompressed) \(payload.count) bytes" }
    }

    /// Every frame in `bytes`, which must be whole masked frames.
    static func clientFrames(_ bytes: [UInt8]) throws -> [ClientFrame] {
        var frames: [ClientFrame] = []
        var offset = 0
        while offset < bytes.count {
            try #require(bytes.count - offset >= 2)
            let first = bytes[offset], second = bytes[offset + 1]
            try #require(second & 0x80 != 0, "a client frame must be masked")
            var length = Int(second & 0x7F)
            var position = offset + 2
            if length == 126 {
                length = Int(bytes[position]) << 8 | Int(bytes[position + 1])
                position += 2
            } else if length == 127 {
                length = bytes[position..<(position + 8)].reduce(0) { $0 << 8 | Int($1) }
                position += 8
            }
            let key = Array(bytes[position..<(position + 4)])
            position += 4
            try #require(bytes.count >= position + length)
            let payload = bytes[position..<(position + length)].enumerated().map { $0.element ^ key[$0.offset % 4] }
            frames.append(ClientFrame(isFinal: first & 0x80 != 0, isCompressed: first & 0x40 != 0, opcode: first & 0x0F,
                                      maskingKey: key, payload: payload))
            offset = position + length
        }
        return frames
    }

    /// The single client frame in `bytes`.
    static func clientFrame(_ bytes: [UInt8]) throws -> ClientFrame {
        let frames = try clientFrames(bytes)
        try #require(frames.count == 1)
        return frames[0]
    }

    /// Bytes from hex digits, spaces ignored: `"81 05 48"`.
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.replacingOccurrences(of: " ", with: "").utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(decoding: digits[$0...($0 + 1)], as: UTF8.self), radix: 16) }
    }
}

extension WebSocketStateMachine {
    /// Feeds `bytes` one at a time, the receipts joined: events and writes in order, the failure if any.
    mutating func receiveByteByByte(_ bytes: [UInt8]) -> Receipt {
        var joined = Receipt()
        for byte in bytes {
            let receipt = receive([byte])
            joined.events += receipt.events
            joined.bytesToWrite += receipt.bytesToWrite
            if let failure = receipt.failure { joined.failure = failure }
        }
        return joined
    }
}
