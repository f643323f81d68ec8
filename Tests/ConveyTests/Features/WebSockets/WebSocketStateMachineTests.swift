import Foundation
import Testing
@testable import Convey

@Suite("WebSocket connection state machine")
struct WebSocketStateMachineTests {
    private typealias Frames = WebSocketTestFrames

    @Test func messagesAreSentAsMaskedFinalFrames() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        let text = try Frames.clientFrame(try machine.sendText("héllo"))
        #expect(text == .init(isFinal: true, isCompressed: false, opcode: 0x1, maskingKey: text.maskingKey, payload: Array("héllo".utf8)))
        let binary = try Frames.clientFrame(try machine.sendBinary([0, 1, 2, 255]))
        #expect(binary.opcode == 0x2 && binary.payload == [0, 1, 2, 255])
        let ping = try Frames.clientFrame(try machine.sendPing([9, 9]))
        #expect(ping.opcode == 0x9 && ping.payload == [9, 9])
        let pong = try Frames.clientFrame(try machine.sendPong())
        #expect(pong.opcode == 0xA && pong.payload == [])
    }

    @Test func eachFrameTheMachineSendsHasItsOwnMaskingKey() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        var keys: [[UInt8]] = []
        for index in 0..<40 { keys.append(try Frames.clientFrame(try machine.sendText("message \(index)")).maskingKey) }
        keys.append(try Frames.clientFrame(machine.receive(Frames.server(0x9, [1])).bytesToWrite).maskingKey)
        keys.append(try Frames.clientFrame(try machine.close()).maskingKey)
        #expect(Set(keys).count == keys.count)
    }

    @Test func aLargeMessageIsSentWithA64BitLength() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        let payload = (0..<70_000).map { UInt8(truncatingIfNeeded: $0) }
        let frame = try machine.sendBinary(payload)
        #expect(frame[1] == 0x80 | 127)
        #expect(try Frames.clientFrame(frame).payload == payload)
    }

    @Test func controlPayloadsOver125BytesAreRefused() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        #expect(throws: WebSocketSendError.controlPayloadTooLong(bytes: 126)) { try machine.sendPing([UInt8](repeating: 0, count: 126)) }
        #expect(try Frames.clientFrame(try machine.sendPing([UInt8](repeating: 0, count: 125))).payload.count == 125)
    }

    // MARK: The close handshake

    @Test func theClientsCloseMovesToClosingUntilTheServersArrives() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        let close = try Frames.clientFrame(try machine.close(code: .goingAway, reason: "bye"))
        #expect(close.opcode == 0x8 && close.payload == Frames.closePayload(1001, Array("bye".utf8)))
        #expect(machine.state == .closing)
        #expect(machine.sentClose == .init(code: .goingAway, reason: "bye"))
        // Nothing of the client's own may follow its close.
        #expect(throws: WebSocketSendError.notOpen(.closing)) { try machine.sendText("late") }
        #expect(throws: WebSocketSendError.notOpen(.closing)) { try machine.sendPing() }
        #expect(throws: WebSocketSendError.notOpen(.closing)) { try machine.close() }
        // Messages still arrive and pings are still answered until the server's close.
        let receipt = machine.receive(Frames.server(text: "in flight") + Frames.server(0x9, [5]))
        #expect(receipt.events == [.text("in flight"), .ping([5])])
        #expect(try Frames.clientFrame(receipt.bytesToWrite).payload == [5])
        // The server's close completes the handshake; the client does not answer it again.
        let closing = machine.receive(Frames.server(0x8, Frames.closePayload(1000, Array("ok".utf8))))
        #expect(closing.events == [.close(code: .normalClosure, reason: "ok")])
        #expect(closing.bytesToWrite == [])
        #expect(machine.state == .closed)
        #expect(machine.receivedClose == .init(code: .normalClosure, reason: "ok"))
        #expect(machine.endOfInput() == nil)
    }

    @Test func theServersCloseIsEchoedAndClosesTheMachine() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        let receipt = machine.receive(Frames.server(0x8, Frames.closePayload(4001, Array("moved".utf8))) + Frames.server(text: "ignored"))
        #expect(receipt.events == [.close(code: WebSocketCloseCode(rawValue: 4001), reason: "moved")])
        let reply = try Frames.clientFrame(receipt.bytesToWrite)
        #expect(reply.opcode == 0x8 && reply.payload == Frames.closePayload(4001))
        #expect(machine.state == .closed)
        #expect(machine.sentClose == .init(code: WebSocketCloseCode(rawValue: 4001), reason: ""))
        #expect(throws: WebSocketSendError.notOpen(.closed)) { try machine.sendText("late") }
        // Bytes after the close, even broken ones, are ignored.
        #expect(machine.receive([0xFF, 0xFF]) == WebSocketStateMachine.Receipt())
        #expect(machine.endOfInput() == nil)
    }

    @Test func closeCodesAndReasonsThatCannotBeSentAreRefused() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        for code: UInt16 in [1005, 1006, 1015, 999, 2000, 5000] {
            #expect(throws: WebSocketSendError.invalidCloseCode(WebSocketCloseCode(rawValue: code))) {
                try machine.close(code: WebSocketCloseCode(rawValue: code))
            }
        }
        #expect(throws: WebSocketSendError.closeReasonTooLong(bytes: 124)) { try machine.close(reason: String(repeating: "a", count: 124)) }
        #expect(throws: WebSocketSendError.reasonWithoutCode) { try machine.close(code: nil, reason: "why") }
        #expect(machine.state == .open)
        // 123 bytes fit; a close without code is allowed.
        var other = try WebSocketStateMachine(deflate: nil)
        #expect(try Frames.clientFrame(try other.close(code: nil)).payload == [])
        #expect(try Frames.clientFrame(try machine.close(reason: String(repeating: "é", count: 61) + "a")).payload.count == 125)
    }

    @Test func aProtocolViolationYieldsTheFailingCloseAndClosesTheMachine() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        let receipt = machine.receive(Frames.server(text: "first") + Frames.server(0x9, [1]) + Frames.server(0x3, []) + Frames.server(text: "never"))
        // What came before the violation is delivered and answered; then the close with 1002.
        #expect(receipt.events == [.text("first"), .ping([1])])
        #expect(receipt.failure == .unknownOpcode(0x3))
        let frames = try Frames.clientFrames(receipt.bytesToWrite)
        #expect(frames.map(\.opcode) == [0xA, 0x8])
        #expect(frames.last?.payload == Frames.closePayload(1002))
        #expect(machine.state == .closed)
        #expect(machine.sentClose == .init(code: .protocolError, reason: ""))
        #expect(machine.receive(Frames.server(text: "later")) == WebSocketStateMachine.Receipt())
        #expect(machine.endOfInput() == .unknownOpcode(0x3))
    }

    @Test func aViolationWhileClosingSendsNoSecondClose() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        _ = try machine.close()
        let receipt = machine.receive(Frames.server(0x1, [0xFF]))
        #expect(receipt.failure == .invalidUTF8InText(byteOffset: 0))
        #expect(receipt.bytesToWrite == [])
        #expect(machine.state == .closed)
    }

    @Test func theConnectionEndingWithoutACloseIs1006() throws {
        var machine = try WebSocketStateMachine(deflate: nil)
        _ = machine.receive(Frames.server(text: "whole"))
        #expect(machine.endOfInput() == .connectionEnded(midFrame: false))
        #expect(machine.state == .closed)
        #expect(WebSocketProtocolError.connectionEnded(midFrame: false).closeCode == .abnormalClosure)

        var midFrame = try WebSocketStateMachine(deflate: nil)
        _ = midFrame.receive(Array(Frames.server(text: "cut short").prefix(5)))
        #expect(midFrame.endOfInput() == .connectionEnded(midFrame: true))

        // After the client's close, the server vanishing without its own is still abnormal.
        var closing = try WebSocketStateMachine(deflate: nil)
        _ = try closing.close()
        #expect(closing.endOfInput() == .connectionEnded(midFrame: false))
    }

    @Test func errorsSayWhatTheServerDid() {
        #expect(WebSocketProtocolError.unknownOpcode(0xB).description == "the server sent a frame with opcode 0x0B, which RFC 6455 does not define")
        #expect(WebSocketProtocolError.invalidCloseCode(1005).description
                == "the server's close frame carried code 1005 (no status received), which may not be sent on the wire")
        #expect(WebSocketProtocolError.messageTooBig(limit: 1024).description == "the server's message is larger than the maximum of 1024 bytes")
    }
}
