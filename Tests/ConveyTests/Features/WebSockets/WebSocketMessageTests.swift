import Foundation
import Testing
@testable import Convey

@Suite("WebSocket messages")
struct WebSocketMessageTests {
    private typealias Frames = WebSocketTestFrames

    @Test func fragmentsAreReassembledWithControlFramesBetweenThem() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        let bytes = Frames.server(0x2, [1, 2], isFinal: false) + Frames.server(0x9, [7])
            + Frames.server(0x0, [3], isFinal: false) + Frames.server(0xA, [8])
            + Frames.server(0x0, []) + Frames.server(text: "next")
        let receipt = machine.receive(bytes)
        #expect(receipt.events == [.ping([7]), .pong([8]), .binary([1, 2, 3]), .text("next")])
        #expect(try Frames.clientFrames(receipt.bytesToWrite).map { [$0.opcode] + $0.payload } == [[0xA, 7]])
    }

    @Test func aContinuationWithNothingToContinueIs1002() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        let receipt = machine.receive(Frames.server(0x0, Array("lo".utf8)))
        #expect(receipt.failure == .continuationWithoutMessage)
        #expect(try Frames.clientFrame(receipt.bytesToWrite).payload == Frames.closePayload(1002))
        // After a finished message too.
        var again = try WebSocketStateMachine(deflate: nil)
        #expect(again.receive(Frames.server(text: "a") + Frames.server(0x0, [0x61])).failure == .continuationWithoutMessage)
    }

    @Test func aNewMessageInsideAFragmentedOneIs1002() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        let receipt = machine.receive(Frames.server(text: "Hel", isFinal: false) + Frames.server(0x2, [1]))
        #expect(receipt.failure == .newMessageInsideFragmentedMessage(opcode: 0x2))
        #expect(try Frames.clientFrame(receipt.bytesToWrite).payload == Frames.closePayload(1002))
    }

    // MARK: UTF-8

    @Test func aCharacterSplitAcrossFramesIsValid() throws {
        // "κόσμε", split inside its second and fourth characters.
        let text = Array("κόσμε".utf8)
        var machine = try WebSocketStateMachine(deflate: nil)
        let bytes = Frames.server(0x1, Array(text[..<3]), isFinal: false) + Frames.server(0x0, Array(text[3..<7]), isFinal: false)
            + Frames.server(0x0, Array(text[7...]))
        #expect(machine.receive(bytes).events == [.text("κόσμε")])
        // A four-byte character, one byte per frame.
        let emoji = Array("😀".utf8)
        let oneByteFrames = emoji.enumerated().flatMap { index, byte in
            Frames.server(index == 0 ? 0x1 : 0x0, [byte], isFinal: index == emoji.count - 1)
        }
        #expect(machine.receive(oneByteFrames).events == [.text("😀")])
    }

    @Test func invalidUTF8FailsAtItsFirstBadByteBeforeTheMessageEnds() throws {
        // 0xED 0xA0: a surrogate, refused at its second byte; the frame announces more to come.
        var machine = try WebSocketStateMachine(deflate: nil)
        let first = Frames.server(0x1, Array("ab".utf8) + [0xED], isFinal: false)
        #expect(machine.receive(first).failure == nil)
        let receipt = machine.receive(Array(Frames.server(0x0, [0xA0, 0x80, 0x61, 0x62]).prefix(3)))
        #expect(receipt.failure == .invalidUTF8InText(byteOffset: 3))
        #expect(try Frames.clientFrame(receipt.bytesToWrite).payload == Frames.closePayload(1007))
    }

    @Test func eachKindOfInvalidSequenceIs1007() throws {
        let cases: [([UInt8], Int)] = [
            ([0x61, 0xC0, 0x80], 1),        // overlong two-byte lead
            ([0xE0, 0x80, 0x80], 1),        // overlong three-byte form
            ([0xF0, 0x8F, 0xBF, 0xBF], 1),  // overlong four-byte form
            ([0xF4, 0x90, 0x80, 0x80], 1),  // past U+10FFFF
            ([0xF5], 0),                    // no such lead byte
            ([0x80], 0),                    // a continuation with no lead
            ([0xCE, 0x61], 1),              // a lead without its continuation
        ]
        for (bytes, offset) in cases {
            var machine = try WebSocketStateMachine(deflate: nil)
            let receipt = machine.receive(Frames.server(0x1, bytes))
            #expect(receipt.failure == .invalidUTF8InText(byteOffset: offset), "\(bytes)")
            #expect(receipt.failure?.closeCode == .invalidFramePayloadData)
        }
    }

    @Test func aMessageEndingInsideACharacterIs1007() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        let receipt = machine.receive(Frames.server(0x1, [0x61, 0xF0, 0x9F], isFinal: false) + Frames.server(0x0, [0x98]))
        #expect(receipt.failure == .invalidUTF8InText(byteOffset: 4))
    }

    @Test func binaryMessagesAreNotCheckedAsUTF8() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        #expect(machine.receive(Frames.server(0x2, [0xFF, 0xED, 0xA0])).events == [.binary([0xFF, 0xED, 0xA0])])
    }

    // MARK: Size

    @Test func aFrameLargerThanTheMaximumIs1009AtItsHeader() throws {
        var machine = try WebSocketStateMachine(deflate: nil, maximumMessageSize: 1000)
        // Only the header arrives: the announced length alone is refused, nothing is buffered.
        let receipt = machine.receive(Array(Frames.server(0x2, [UInt8](repeating: 0, count: 1001)).prefix(4)))
        #expect(receipt.failure == .messageTooBig(limit: 1000))
        #expect(try Frames.clientFrame(receipt.bytesToWrite).payload == Frames.closePayload(1009))
        // A header announcing an exabyte, likewise.
        var other = try WebSocketStateMachine(deflate: nil)
        #expect(other.receive(Frames.hex("82 7f 0f ff ff ff ff ff ff ff")).failure == .messageTooBig(limit: 16 << 20))
    }

    @Test func fragmentsAddingUpPastTheMaximumAre1009() throws {
        var machine = try WebSocketStateMachine(deflate: nil, maximumMessageSize: 1000)
        let chunk = [UInt8](repeating: 0x61, count: 400)
        let receipt = machine.receive(Frames.server(0x1, chunk, isFinal: false) + Frames.server(0x0, chunk, isFinal: false)
            + Frames.server(0x0, chunk))
        #expect(receipt.failure == .messageTooBig(limit: 1000))
        // Exactly the maximum is allowed.
        var exact = try WebSocketStateMachine(deflate: nil, maximumMessageSize: 1000)
        #expect(exact.receive(Frames.server(0x1, chunk, isFinal: false) + Frames.server(0x0, chunk, isFinal: false)
            + Frames.server(0x0, [UInt8](repeating: 0x61, count: 200))).events == [.text(String(repeating: "a", count: 1000))])
    }

    @Test func theDefaultMaximumIs16MiB() throws {
        let machine = try WebSocketStateMachine(deflate: nil)
        #expect(machine.maximumMessageSize == 16 * 1024 * 1024)
    }

    // MARK: Streams of bytes

    @Test func a15KBMessageFedOneByteAtATimeArrivesWhole() throws {
        // Letters with an "é" (two bytes) now and then, so that characters are split too.
        var text = ""
        for index in 0..<15_000 {
            text += index % 97 == 0 ? "é" : String(UnicodeScalar(UInt8(0x61 + index % 26)))
        }
        var machine = try WebSocketStateMachine(deflate: nil)
        var events: [WebSocketEvent] = []
        for byte in Frames.server(text: text) {
            let receipt = machine.receive([byte])
            #expect(receipt.failure == nil)
            events += receipt.events
        }
        #expect(events == [.text(text)])
    }

    @Test func oneHundredThousandSmallMessagesArriveInOrder() throws {
        var bytes: [UInt8] = []
        for index in 0..<100_000 { bytes += Frames.server(text: String(index)) }
        var machine = try WebSocketStateMachine(deflate: nil)
        var received: [String] = []
        received.reserveCapacity(100_000)
        // In reads of 64 KiB, as a socket gives them: frames cut anywhere.
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + 65536, bytes.count)
            let receipt = bytes[offset..<end].withUnsafeBytes { machine.receive($0) }
            #expect(receipt.failure == nil)
            for event in receipt.events {
                if case .text(let text) = event { received.append(text) }
            }
            offset = end
        }
        #expect(received.count == 100_000)
        #expect(received == (0..<100_000).map { String($0) })
    }
}
