import Foundation
import Testing
@testable import Convey

@Suite("WebSocket frames")
struct WebSocketFrameTests {
    private typealias Frames = WebSocketTestFrames
    private let rfcKey: (UInt8, UInt8, UInt8, UInt8) = (0x37, 0xFA, 0x21, 0x3D)

    // MARK: RFC 6455 §5.7's examples

    @Test func aMaskedHelloIsRFC6455sExampleByteForByte() {
        let frame = Array("Hello".utf8).withUnsafeBytes { WebSocketFrameEncoder.frame(.text, payload: $0, maskingKey: rfcKey) }
        #expect(frame == Frames.hex("81 85 37 fa 21 3d 7f 9f 4d 51 58"))
    }

    @Test func aMaskedPongOfHelloIsRFC6455sExampleByteForByte() {
        let frame = Array("Hello".utf8).withUnsafeBytes { WebSocketFrameEncoder.frame(.pong, payload: $0, maskingKey: rfcKey) }
        #expect(frame == Frames.hex("8a 85 37 fa 21 3d 7f 9f 4d 51 58"))
    }

    @Test func lengthsTakeSevenSixteenOrSixtyFourBitsAsRFC6455sExamplesShow() {
        let short = [UInt8](repeating: 7, count: 125).withUnsafeBytes { WebSocketFrameEncoder.frame(.binary, payload: $0, maskingKey: rfcKey) }
        #expect(Array(short.prefix(2)) == [0x82, 0x80 | 125])
        // 256 bytes: 0x82 0x7E 0x0100, masked.
        let medium = [UInt8](repeating: 7, count: 256).withUnsafeBytes { WebSocketFrameEncoder.frame(.binary, payload: $0, maskingKey: rfcKey) }
        #expect(Array(medium.prefix(8)) == [0x82, 0xFE, 0x01, 0x00, 0x37, 0xFA, 0x21, 0x3D])
        #expect(medium.count == 8 + 256)
        // 64 KiB: 0x82 0x7F 0x0000000000010000, masked.
        let large = [UInt8](repeating: 7, count: 65536).withUnsafeBytes { WebSocketFrameEncoder.frame(.binary, payload: $0, maskingKey: rfcKey) }
        #expect(Array(large.prefix(14)) == [0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0, 0x37, 0xFA, 0x21, 0x3D])
        #expect(large.count == 14 + 65536)
        // 65535 is still a 16-bit length.
        let edge = [UInt8](repeating: 7, count: 65535).withUnsafeBytes { WebSocketFrameEncoder.frame(.binary, payload: $0, maskingKey: rfcKey) }
        #expect(Array(edge.prefix(4)) == [0x82, 0xFE, 0xFF, 0xFF])
    }

    @Test func maskingXorsEveryByteWithTheKeyRepeated() throws {
        let payload = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let frame = payload.withUnsafeBytes { WebSocketFrameEncoder.frame(.binary, payload: $0, maskingKey: rfcKey) }
        let decoded = try Frames.clientFrame(frame)
        #expect(decoded.payload == payload)
        #expect(decoded.maskingKey == [0x37, 0xFA, 0x21, 0x3D])
    }

    @Test func everyFrameGetsAFreshMaskingKey() throws {
        let keys = try (0..<50).map { _ in
            try Frames.clientFrame(Array("Hello".utf8).withUnsafeBytes { WebSocketFrameEncoder.frame(.text, payload: $0) }).maskingKey
        }
        // 50 draws of 32 random bits: a repeat would mean the key is not drawn afresh.
        #expect(Set(keys).count == 50)
    }

    @Test func theServersUnmaskedHelloDecodes() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        #expect(machine.receive(Frames.hex("81 05 48 65 6c 6c 6f")).events == [.text("Hello")])
    }

    @Test func aFragmentedHelloDecodesAsOneMessage() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        #expect(machine.receive(Frames.hex("01 03 48 65 6c")).events == [])
        #expect(machine.receive(Frames.hex("80 02 6c 6f")).events == [.text("Hello")])
    }

    @Test func aPingOfHelloIsAnsweredWithAMaskedPongOfHello() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        let receipt = machine.receive(Frames.hex("89 05 48 65 6c 6c 6f"))
        #expect(receipt.events == [.ping(Array("Hello".utf8))])
        let pong = try Frames.clientFrame(receipt.bytesToWrite)
        #expect(pong.opcode == 0xA && pong.isFinal && pong.payload == Array("Hello".utf8))
    }

    @Test func binaryFramesWith16And64BitLengthsDecode() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        let medium = (0..<256).map { UInt8($0) }
        #expect(Array(Frames.server(0x2, medium).prefix(4)) == Frames.hex("82 7e 01 00"))
        #expect(machine.receive(Frames.server(0x2, medium)).events == [.binary(medium)])
        let large = (0..<65536).map { UInt8(truncatingIfNeeded: $0) }
        #expect(Array(Frames.server(0x2, large).prefix(10)) == Frames.hex("82 7f 00 00 00 00 00 01 00 00"))
        #expect(machine.receive(Frames.server(0x2, large)).events == [.binary(large)])
    }

    @Test func aHeaderSplitAtEveryByteDecodes() throws {
        let large = (0..<65536).map { UInt8(truncatingIfNeeded: $0 * 3) }
        var machine = try WebSocketStateMachine(deflate: nil)
        #expect(machine.receiveByteByByte(Frames.server(0x2, large) + Frames.server(text: "after")).events == [.binary(large), .text("after")])
    }

    // MARK: Rules a frame breaks by itself: 1002, at the byte that breaks them

    /// What the machine does with `bytes`, fed whole and fed a byte at a time: both must fail
    /// alike, with `error`, sending a close frame with its code, and deliver `before` first.
    private func expectFailure(_ bytes: [UInt8], _ error: WebSocketProtocolError, deflate: PerMessageDeflateParameters? = nil,
                               before: [WebSocketEvent] = [], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for byteByByte in [false, true] {
            var machine = try WebSocketStateMachine(deflate: deflate)
            let receipt = byteByByte ? machine.receiveByteByByte(bytes) : machine.receive(bytes)
            #expect(receipt.failure == error, sourceLocation: sourceLocation)
            #expect(receipt.events == before, sourceLocation: sourceLocation)
            let close = try Frames.clientFrame(receipt.bytesToWrite)
            #expect(close.opcode == 0x8, sourceLocation: sourceLocation)
            #expect(close.payload == Frames.closePayload(error.closeCode.rawValue), sourceLocation: sourceLocation)
            #expect(machine.state == .closed, sourceLocation: sourceLocation)
            #expect(machine.failure == error, sourceLocation: sourceLocation)
        }
    }

    @Test func reservedBitsWithoutANegotiatedExtensionAre1002() throws {
        try expectFailure(Frames.server(0x1, Array("x".utf8), reserved: 0x40), .reservedBitsSet(bits: 0x40, opcode: 0x1))
        try expectFailure(Frames.server(0x2, [1], reserved: 0x20), .reservedBitsSet(bits: 0x20, opcode: 0x2))
        try expectFailure(Frames.server(0x1, [], reserved: 0x10), .reservedBitsSet(bits: 0x10, opcode: 0x1))
        #expect(WebSocketProtocolError.reservedBitsSet(bits: 0x40, opcode: 1).closeCode == .protocolError)
    }

    @Test func withDeflateOnlyRSV1OnAFirstDataFrameIsAllowed() throws {
        let deflate = PerMessageDeflateParameters()
        try expectFailure(Frames.server(0x1, [], reserved: 0x20), .reservedBitsSet(bits: 0x20, opcode: 0x1), deflate: deflate)
        try expectFailure(Frames.server(0x1, [], reserved: 0x60), .reservedBitsSet(bits: 0x60, opcode: 0x1), deflate: deflate)
        try expectFailure(Frames.server(0x9, [], reserved: 0x40), .reservedBitsSet(bits: 0x40, opcode: 0x9), deflate: deflate)
        // RSV1 on a continuation: permessage-deflate marks the first frame only.
        let hello = Frames.hex("f2 48 cd c9 c9 07 00")
        try expectFailure(Frames.server(0x1, Array(hello[..<3]), isFinal: false, reserved: 0x40) + Frames.server(0x0, Array(hello[3...]), reserved: 0x40),
                          .compressedContinuationFrame, deflate: deflate)
    }

    @Test func unknownOpcodesAre1002() throws {
        for opcode: UInt8 in [0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF] {
            try expectFailure(Frames.server(opcode, [1, 2]), .unknownOpcode(opcode))
        }
    }

    @Test func aMaskedServerFrameIs1002() throws {
        try expectFailure(Frames.server(0x1, Array("Hello".utf8), maskingKey: [1, 2, 3, 4]), .maskedFrame(opcode: 0x1))
    }

    @Test func controlFramesOver125BytesAre1002() throws {
        try expectFailure(Frames.server(0x9, [UInt8](repeating: 0, count: 126)), .controlFrameTooLong(opcode: 0x9, length: 126))
        // The length is refused as soon as its first byte says 16 bits follow.
        try expectFailure(Frames.hex("8a 7e"), .controlFrameTooLong(opcode: 0xA, length: 126))
        try expectFailure(Frames.server(0x8, Frames.closePayload(1000) + [UInt8](repeating: 0x61, count: 124)),
                          .controlFrameTooLong(opcode: 0x8, length: 126))
        // 125 is allowed.
        var machine = try WebSocketStateMachine(deflate: nil)
        #expect(machine.receive(Frames.server(0x9, [UInt8](repeating: 9, count: 125))).failure == nil)
    }

    @Test func fragmentedControlFramesAre1002() throws {
        try expectFailure(Frames.server(0x9, [1], isFinal: false), .fragmentedControlFrame(opcode: 0x9))
        try expectFailure(Frames.server(0x8, Frames.closePayload(1000), isFinal: false), .fragmentedControlFrame(opcode: 0x8))
    }

    @Test func a64BitLengthWithItsTopBitSetIs1002() throws {
        try expectFailure(Frames.hex("82 7f 80 00 00 00 00 00 00 00"), .frameLengthOutOfRange(1 << 63))
    }

    // MARK: Close frames on the wire

    @Test func invalidCloseCodesAre1002() throws {
        let invalid: [UInt16] = [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535]
        for code in invalid {
            try expectFailure(Frames.server(0x8, Frames.closePayload(code)), .invalidCloseCode(code))
        }
    }

    @Test func validCloseCodesAreReportedAndEchoed() throws {
        let valid: [UInt16] = [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999]
        for code in valid {
            var machine = try WebSocketStateMachine(deflate: nil)
            let receipt = machine.receive(Frames.server(0x8, Frames.closePayload(code, Array("bye".utf8))))
            #expect(receipt.events == [.close(code: WebSocketCloseCode(rawValue: code), reason: "bye")])
            #expect(try Frames.clientFrame(receipt.bytesToWrite).payload == Frames.closePayload(code))
        }
    }

    @Test func aClosePayloadOfOneByteIs1002() throws {
        try expectFailure(Frames.server(0x8, [0x03]), .closePayloadOfOneByte)
    }

    @Test func aCloseReasonThatIsNotUTF8Is1007() throws {
        try expectFailure(Frames.server(0x8, Frames.closePayload(1000, [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80])),
                          .invalidUTF8InCloseReason)
        // A reason cut inside a character.
        try expectFailure(Frames.server(0x8, Frames.closePayload(1000, [0x61, 0xE2, 0x82])), .invalidUTF8InCloseReason)
        #expect(WebSocketProtocolError.invalidUTF8InCloseReason.closeCode == .invalidFramePayloadData)
    }

    @Test func aCloseWithoutCodeIsReportedWithoutCodeAndAnsweredWithoutCode() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        let receipt = machine.receive(Frames.server(0x8))
        #expect(receipt.events == [.close(code: nil, reason: "")])
        #expect(try Frames.clientFrame(receipt.bytesToWrite).payload == [])
    }

    // MARK: Close codes

    @Test func closeCodesOnTheWireFollowIANAsRegistry() {
        let allowed = (0...UInt16.max).filter { WebSocketCloseCode(rawValue: $0).isValidOnTheWire }
        #expect(allowed == Array(1000...1003) + Array(1007...1014) + Array(3000...4999))
        #expect(WebSocketCloseCode.protocolError.description == "1002 (protocol error)")
        #expect(WebSocketCloseCode(rawValue: 4001).description == "4001")
    }
}
