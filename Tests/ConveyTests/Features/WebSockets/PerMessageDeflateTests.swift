import Foundation
import Testing
@testable import Convey

@Suite("permessage-deflate")
struct PerMessageDeflateTests {
    private typealias Frames = WebSocketTestFrames

    // MARK: RFC 7692 §7.2.3's examples, received

    @Test func helloCompressedIsRFC7692sFirstExample() throws {
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters())
        #expect(machine.receive(Frames.hex("c1 07 f2 48 cd c9 c9 07 00")).events == [.text("Hello")])
    }

    @Test func aCompressedMessageInFragmentsInflates() throws {
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters())
        #expect(machine.receive(Frames.hex("41 03 f2 48 cd 80 04 c9 c9 07 00")).events == [.text("Hello")])
    }

    @Test func theSecondHelloUsesTheSharedWindow() throws {
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters())
        let receipt = machine.receive(Frames.hex("c1 07 f2 48 cd c9 c9 07 00") + Frames.hex("c1 05 f2 00 11 00 00"))
        #expect(receipt.events == [.text("Hello"), .text("Hello")])
    }

    @Test func aStoredBlockInflates() throws {
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters())
        #expect(machine.receive(Frames.hex("c1 0b 00 05 00 fa ff 48 65 6c 6c 6f 00")).events == [.text("Hello")])
    }

    @Test func aBlockWithBFINALSetInflatesAndTheNextMessageStartsAfresh() throws {
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters())
        let receipt = machine.receive(Frames.hex("c1 08 f3 48 cd c9 c9 07 00 00") + Frames.hex("c1 07 f2 48 cd c9 c9 07 00"))
        #expect(receipt.events == [.text("Hello"), .text("Hello")])
    }

    @Test func twoDeflateBlocksInOneMessageInflate() throws {
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters())
        #expect(machine.receive(Frames.hex("c1 0d f2 48 05 00 00 00 ff ff ca c9 c9 07 00")).events == [.text("Hello")])
    }

    @Test func anUncompressedMessageStillArrivesWhenDeflateWasNegotiated() throws {
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters())
        #expect(machine.receive(Frames.hex("81 05 48 65 6c 6c 6f")).events == [.text("Hello")])
    }

    @Test func anEmptyCompressedMessageIsOneZeroByte() throws {
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters())
        #expect(machine.receive(Frames.hex("c2 01 00")).events == [.binary([])])
        let frame = try Frames.clientFrame(try machine.sendBinary([]))
        #expect(frame.isCompressed && frame.payload == [0x00])
        // Also right after another message, where zlib's flush writes nothing at all.
        _ = try machine.sendText("Hello")
        let again = try Frames.clientFrame(try machine.sendBinary([]))
        #expect(again.isCompressed && again.payload == [0x00])
    }

    // MARK: Sent

    @Test func helloIsSentAsRFC7692sExampleByteForByte() throws {
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters())
        let first = try machine.sendText("Hello")
        // c1 87: final, RSV1, text; masked, 7 bytes; then the key and the masked payload.
        #expect(Array(first.prefix(2)) == [0xC1, 0x87])
        #expect(try Frames.clientFrame(first).payload == Frames.hex("f2 48 cd c9 c9 07 00"))
        // Context kept: the second "Hello" is the back-reference of §7.2.3.2.
        #expect(try Frames.clientFrame(try machine.sendText("Hello")).payload == Frames.hex("f2 00 11 00 00"))
    }

    @Test func withoutClientContextTakeoverEachMessageIsCompressedAlone() throws {
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters(clientNoContextTakeover: true))
        #expect(try Frames.clientFrame(try machine.sendText("Hello")).payload == Frames.hex("f2 48 cd c9 c9 07 00"))
        #expect(try Frames.clientFrame(try machine.sendText("Hello")).payload == Frames.hex("f2 48 cd c9 c9 07 00"))
    }

    @Test func aClientHeldToAnEightBitWindowSendsUncompressed() throws {
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters(clientMaxWindowBits: 8))
        let frame = try Frames.clientFrame(try machine.sendText("Hello"))
        #expect(!frame.isCompressed && frame.payload == Array("Hello".utf8))
    }

    @Test func whatTheClientCompressesTheServerSideInflates() throws {
        // The client's frames, unmasked and fed to a reader with the same parameters, come back
        // as they were sent: large, repetitive, random, many in a row with context kept.
        for parameters in [PerMessageDeflateParameters(), PerMessageDeflateParameters(clientNoContextTakeover: true, clientMaxWindowBits: 9)] {
            var client = try WebSocketStateMachine(deflate: parameters)
            var peer = try WebSocketMessageReader(maximumMessageSize: 16 << 20,
                                                  deflate: PerMessageDeflateParameters(serverNoContextTakeover: parameters.clientNoContextTakeover,
                                                                                       serverMaxWindowBits: parameters.clientMaxWindowBits))
            var random = SystemRandomNumberGenerator()
            let messages: [[UInt8]] = [
                Array(String(repeating: "WebSocket ", count: 100_000).utf8),
                (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &random) },
                Array("short".utf8), [],
            ] + (0..<50).map { Array("message \($0) repeats message \($0)".utf8) }
            for message in messages {
                let frame = try Frames.clientFrame(try client.sendBinary(message))
                #expect(frame.isCompressed)
                var received: [WebSocketEvent] = []
                try Frames.server(0x2, frame.payload, reserved: 0x40).withUnsafeBytes { try peer.read($0) { received.append($0) } }
                #expect(received == [.binary(message)])
            }
        }
    }

    @Test func withoutServerContextTakeoverTheInflaterStartsEachMessageAfresh() throws {
        // Each message compressed alone, as a server without context takeover sends them.
        let compressor = try PerMessageDeflateCompressor(windowBits: 15, noContextTakeover: true)
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters(serverNoContextTakeover: true))
        for text in ["Hello", "Hello", "Hello, Hello"] {
            let payload = try Array(text.utf8).withUnsafeBytes { try compressor.compress($0) }
            #expect(machine.receive(Frames.server(0x1, payload, reserved: 0x40)).events == [.text(text)])
        }
    }

    // MARK: Failures

    @Test func corruptCompressedDataIs1007() throws {
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters())
        // 0xff: a block type of 3, which DEFLATE reserves.
        let receipt = machine.receive(Frames.server(0x2, [0xFF, 0xFF, 0xFF], reserved: 0x40))
        guard case .invalidCompressedData = receipt.failure else {
            Issue.record("expected invalid compressed data, got \(String(describing: receipt.failure))")
            return
        }
        #expect(try Frames.clientFrame(receipt.bytesToWrite).payload == Frames.closePayload(1007))
    }

    @Test func compressedTextThatIsNotUTF8Is1007() throws {
        let compressor = try PerMessageDeflateCompressor(windowBits: 15, noContextTakeover: false)
        let payload = try ([0x61, 0x62, 0xFF, 0x63] as [UInt8]).withUnsafeBytes { try compressor.compress($0) }
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters())
        #expect(machine.receive(Frames.server(0x1, payload, reserved: 0x40)).failure == .invalidUTF8InText(byteOffset: 2))
    }

    /// `mebibytes` of zeros (64 unless said) as one compressed message, made without holding
    /// them: 1 MiB at a time through one deflate stream, each sync flush's tail kept but the last.
    private func bomb(mebibytes: Int = 64) throws -> [UInt8] {
        let compressor = try PerMessageDeflateCompressor(windowBits: 15, noContextTakeover: false)
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var payload: [UInt8] = []
        for index in 0..<mebibytes {
            if index > 0 { payload += [0x00, 0x00, 0xFF, 0xFF] }
            payload += try zeros.withUnsafeBytes { try compressor.compress($0) }
        }
        return payload
    }

    @Test func aDeflateBombStopsAtTheLimitWith1009AndBoundedMemory() throws {
        let payload = try bomb()
        #expect(payload.count < 128 * 1024)
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters())
        let receipt = machine.receive(Frames.server(0x2, payload, reserved: 0x40))
        #expect(receipt.failure == .messageTooBig(limit: 16 << 20))
        #expect(try Frames.clientFrame(receipt.bytesToWrite).payload == Frames.closePayload(1009))
        // The message's buffer never grew past the limit (and what malloc rounds it up to).
        #expect(machine.largestMessageBuffer >= 8 << 20)
        #expect(machine.largestMessageBuffer <= (16 << 20) + 4096)
    }

    @Test func theInflaterProducesAtMostOneBytePastItsAllowance() throws {
        let payload = try bomb()
        let inflater = try PerMessageDeflateDecompressor(windowBits: 15, noContextTakeover: false)
        var delivered = 0
        let produced = try payload.withUnsafeBytes { bytes in
            try inflater.inflate(bytes, allowance: 1_000_000) { (slice) throws(WebSocketProtocolError) in delivered += slice.count }
        }
        #expect(produced == 1_000_001)
        #expect(delivered == 1_000_001)
    }

    @Test func aBombBelowTheLimitInflatesWhole() throws {
        // A message of exactly the limit: the limit is what stops a bomb, not its ratio.
        let payload = try bomb(mebibytes: 4)
        var machine = try WebSocketStateMachine(deflate: PerMessageDeflateParameters(), maximumMessageSize: 4 << 20)
        let receipt = machine.receive(Frames.server(0x2, payload, reserved: 0x40))
        #expect(receipt.failure == nil)
        guard case .binary(let bytes) = receipt.events.first else {
            Issue.record("expected a binary message")
            return
        }
        #expect(bytes.count == 4 << 20)
        #expect(bytes.allSatisfy { $0 == 0 })
    }
}
