#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// WebSocket tasks against the project's scripted raw server (scripts/ws-raw-server.py), frame by
/// frame: every RFC 6455 rule it breaks closes the connection with its code and a typed error,
/// never a crash, a hang or unbounded memory; and the connection's own timing rules (pings, the
/// total timeout) on a clock the test moves.
@Suite("WebSocket against the raw server", .wire)
@ConveyActor
struct WebSocketRawTests {
    /// A script that breaks a rule, and the code the client must close with.
    struct Violation: Sendable, CustomTestStringConvertible {
        let script: String
        let kind: WebSocketFailure
        let code: Int
        var maximumMessageSize = 16 << 20
        var testDescription: String { script }
    }

    nonisolated static let violations: [Violation] = [
        Violation(script: "rsv1", kind: .protocolError, code: 1002),
        Violation(script: "rsv2", kind: .protocolError, code: 1002),
        Violation(script: "rsv3", kind: .protocolError, code: 1002),
        Violation(script: "unknown-opcode", kind: .protocolError, code: 1002),
        Violation(script: "unknown-control-opcode", kind: .protocolError, code: 1002),
        Violation(script: "masked", kind: .protocolError, code: 1002),
        Violation(script: "long-ping", kind: .protocolError, code: 1002),
        Violation(script: "fragmented-ping", kind: .protocolError, code: 1002),
        Violation(script: "orphan-continuation", kind: .protocolError, code: 1002),
        Violation(script: "interleaved-data", kind: .protocolError, code: 1002),
        Violation(script: "close/1005", kind: .protocolError, code: 1002),
        Violation(script: "close/1006", kind: .protocolError, code: 1002),
        Violation(script: "close/999", kind: .protocolError, code: 1002),
        Violation(script: "close/1004", kind: .protocolError, code: 1002),
        Violation(script: "close/2999", kind: .protocolError, code: 1002),
        Violation(script: "close-one-byte", kind: .protocolError, code: 1002),
        Violation(script: "close-bad-utf8", kind: .protocolError, code: 1007),
        Violation(script: "bad-utf8", kind: .protocolError, code: 1007),
        Violation(script: "bad-utf8-split", kind: .protocolError, code: 1007),
        Violation(script: "deflate-rsv1-continuation", kind: .protocolError, code: 1002),
        Violation(script: "big/2048", kind: .messageTooBig, code: 1009, maximumMessageSize: 1024),
        // 64 MiB of zeros in about 64 KB: stopped at the default 16 MiB.
        Violation(script: "deflate-bomb", kind: .messageTooBig, code: 1009),
    ]

    @Test(arguments: violations)
    func aViolationClosesWithItsCodeAndATypedError(_ violation: Violation) async throws {
        let id = UUID().uuidString
        let events = EventRecorder()
        let server = webSocketServer(try WebSocketServers.raw()) { $0.observers = [events] }
        var task = TestSocket(server: server, path: violation.script, queryParameters: ["id": id])
        task.maximumMessageSize = violation.maximumMessageSize
        let connection = try await task.connect()
        let (messages, error) = await readAll(connection)
        #expect(messages.isEmpty)
        let failure = try #require(webSocketFailure(error), "expected a WebSocket failure, got \(String(describing: error))")
        #expect(failure.kind == violation.kind)
        #expect(failure.closeCode == violation.code)
        await #expect(throws: ConveyError.self) { try await connection.send("after the failure") }
        let result = try await WebSocketServers.rawResult(id)
        #expect((result["close"] as? [String: Any])?["code"] as? Int == violation.code)
        #expect(result["masked"] as? Bool == true)
        #expect(events.onlyRun.last?.hasPrefix("webSocketClosed \(violation.code) - by client") == true)
    }

    @Test(arguments: [1000, 3000, 4999])
    func aValidCloseCodeIsEchoedAndEndsTheMessages(_ code: Int) async throws {
        let id = UUID().uuidString
        let server = webSocketServer(try WebSocketServers.raw())
        let connection = try await TestSocket(server: server, path: "close/\(code)", queryParameters: ["id": id, "reason": "fine"]).connect()
        let (messages, error) = await readAll(connection)
        #expect(messages.isEmpty)
        #expect(error == nil)
        #expect(connection.closeCode == code)
        #expect(connection.closeReason == "fine")
        #expect((try await WebSocketServers.rawResult(id)["close"] as? [String: Any])?["code"] as? Int == code)
    }

    @Test func aCloseWithoutACodeIsAnsweredWithoutOne() async throws {
        let id = UUID().uuidString
        let server = webSocketServer(try WebSocketServers.raw())
        let connection = try await TestSocket(server: server, path: "close-empty", queryParameters: ["id": id]).connect()
        let (_, error) = await readAll(connection)
        #expect(error == nil)
        #expect(connection.closeCode == 1005)
        let close = try #require(try await WebSocketServers.rawResult(id)["close"] as? [String: Any])
        #expect(close["code"] is NSNull)
    }

    @Test func fragmentsAreReassembledAcrossCharactersAndPings() async throws {
        let server = webSocketServer(try WebSocketServers.raw())
        #expect(try await readAll(TestSocket(server: server, path: "utf8-split").connect()).messages == [.text("κόσμε")])
        let id = UUID().uuidString
        let pinged = try await TestSocket(server: server, path: "fragments-with-pings", queryParameters: ["id": id]).connect()
        #expect(await readAll(pinged).messages == [.text("Hello")])
        // Each ping answered with its payload: "p1" and "p2".
        #expect(try await WebSocketServers.rawResult(id)["pongs"] as? [String] == ["7031", "7032"])
    }

    @Test func compressedMessagesShareTheServersWindow() async throws {
        let server = webSocketServer(try WebSocketServers.raw())
        let connection = try await TestSocket(server: server, path: "deflate-hello").connect()
        #expect(connection.extensions == ["permessage-deflate"])
        #expect(await readAll(connection).messages == [.text("Hello"), .text("Hello")])
    }

    @Test func a15KBMessageTrickledOneByteAtATimeArrivesWhole() async throws {
        let server = webSocketServer(try WebSocketServers.raw())
        let (messages, error) = await readAll(try await TestSocket(server: server, path: "trickle-15k").connect())
        #expect(error == nil)
        #expect(messages == [.text(String(repeating: "aé", count: 5000))])
    }

    @Test func oneHundredThousandMessagesArriveInOrder() async throws {
        let id = UUID().uuidString
        let server = webSocketServer(try WebSocketServers.raw())
        let connection = try await TestSocket(server: server, path: "many", queryParameters: ["count": "100000", "id": id]).connect()
        var next = 0
        for try await message in connection.messages {
            if message != .text(String(next)) { Issue.record("message \(next) was \(message)") }
            next += 1
        }
        #expect(next == 100_000)
        #expect((try await WebSocketServers.rawResult(id)["close"] as? [String: Any])?["code"] as? Int == 1000)
    }

    @Test func aSlowReaderStopsTheSocketBeingReadAndKeepsTheBufferBounded() async throws {
        let server = webSocketServer(try WebSocketServers.raw())
        let bufferSize = 4 << 10
        let connection = try await TestSocket(server: server, path: "many", queryParameters: ["count": "100000"]).connect(bufferSize: bufferSize)
        // Nobody reads: the reader fills the buffer and waits, with the rest still on the wire.
        await connection.session.readerWaitsForApp()
        let waiting = connection.session.incoming
        #expect(waiting.bufferedBytes >= bufferSize)
        #expect(waiting.bufferedBytes <= bufferSize + 5)  // one message ("99999") past the bound at most
        #expect(waiting.received < 100_000)
        var next = 0
        for try await message in connection.messages {
            if message != .text(String(next)) { Issue.record("message \(next) was \(message)") }
            next += 1
        }
        #expect(next == 100_000)
    }

    @Test func aServerVanishingMidFrameIsALostConnection() async throws {
        let server = webSocketServer(try WebSocketServers.raw())
        let (_, error) = await readAll(try await TestSocket(server: server, path: "vanish-mid-frame").connect())
        let failure = try #require(webSocketFailure(error))
        #expect(failure.kind == .connectionLost)
        #expect(failure.closeCode == 1006)
    }

    @Test func aPingDeadlineClosesAHalfOpenConnection() async throws {
        let id = UUID().uuidString
        let clock = ManualRunClock()
        let pings = WebSocketEventWaiter(kind: "webSocketPing sent")
        let server = webSocketServer(try WebSocketServers.raw()) {
            $0.runClock = clock
            $0.observers = [pings]
        }
        var task = TestSocket(server: server, path: "no-pong", queryParameters: ["id": id])
        task.pingInterval = .seconds(30)
        task.pongDeadline = .seconds(5)
        let connection = try await task.connect()
        clock.advance(by: .seconds(30))
        await pings.next()
        clock.advance(by: .seconds(5))
        let (_, error) = await readAll(connection)
        let failure = try #require(webSocketFailure(error))
        #expect(failure.kind == .pongTimeout)
        #expect(failure.closeCode == 1001)
        #expect((try await WebSocketServers.rawResult(id)["close"] as? [String: Any])?["code"] as? Int == 1001)
    }

    @Test func aPingWithoutItsPongThrowsAndClosesTheConnection() async throws {
        let clock = ManualRunClock()
        let pings = WebSocketEventWaiter(kind: "webSocketPing sent")
        let server = webSocketServer(try WebSocketServers.raw()) {
            $0.runClock = clock
            $0.observers = [pings]
        }
        var task = TestSocket(server: server, path: "no-pong")
        task.pongDeadline = .seconds(5)
        let connection = try await task.connect()
        let pinging = Task { try await connection.ping() }
        await pings.next()
        clock.advance(by: .seconds(5))
        await #expect(throws: ConveyError.self) { try await pinging.value }
        #expect(webSocketFailure(await readAll(connection).error)?.kind == .pongTimeout)
    }

    @Test func cancellingTheReaderClosesWith1001() async throws {
        let id = UUID().uuidString
        let server = webSocketServer(try WebSocketServers.raw())
        let connection = try await TestSocket(server: server, path: "no-pong", queryParameters: ["id": id]).connect()
        let reading = Task { await readAll(connection) }
        reading.cancel()
        let error = await reading.value.error
        #expect((error as? ConveyError)?.isCancellation == true)
        #expect((try await WebSocketServers.rawResult(id)["close"] as? [String: Any])?["code"] as? Int == 1001)
    }

    @Test func theTotalTimeoutClosesWith1001() async throws {
        let id = UUID().uuidString
        let clock = ManualRunClock()
        let server = webSocketServer(try WebSocketServers.raw()) { $0.runClock = clock }
        let connection = try await TestSocket(server: server, path: "echo", queryParameters: ["id": id]).connect(totalTimeout: .seconds(30))
        try await connection.send("before")
        #expect(try await nextMessage(connection) == .text("before"))
        clock.advance(by: .seconds(31))
        let (_, error) = await readAll(connection)
        guard case ConveyError.totalTimedOut(let limit, _)? = error as? ConveyError else {
            Issue.record("expected the total timeout, got \(String(describing: error))")
            return
        }
        #expect(limit == .seconds(30))
        #expect((try await WebSocketServers.rawResult(id)["close"] as? [String: Any])?["code"] as? Int == 1001)
    }

    @Test func aWrongAcceptFailsTheHandshakeAndIsNotRetried() async throws {
        let events = EventRecorder()
        let server = webSocketServer(try WebSocketServers.raw()) {
            $0.observers = [events]
            $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .zero)
        }
        do {
            _ = try await TestSocket(server: server, path: "bad-accept").connect()
            Issue.record("the connect should have failed")
        } catch let error {
            #expect(webSocketFailure(error)?.kind == .handshakeFailed)
        }
        #expect(events.onlyRun.filter { $0.hasPrefix("attemptStarted") } == ["attemptStarted 1"])
    }

    @Test func aRedirectIsFollowedToTheWebSocket() async throws {
        let events = EventRecorder()
        let server = webSocketServer(try WebSocketServers.raw()) { $0.observers = [events] }
        let connection = try await TestSocket(server: server, path: "redirect", queryParameters: ["to": "utf8-split"]).connect()
        #expect(connection.handshake?.url.path == "/utf8-split")
        #expect(await readAll(connection).messages == [.text("κόσμε")])
        #expect(events.onlyRun.contains("redirectFollowed 307"))
    }

    @Test(arguments: ["vanish-mid-frame", "close/1001", "close/1012"])
    func aDroppedConnectionReconnectsAndTheMessagesGoOn(_ first: String) async throws {
        let events = EventRecorder()
        let server = webSocketServer(try WebSocketServers.raw()) { $0.observers = [events] }
        var task = TestSocket(server: server, path: "once", queryParameters: ["id": UUID().uuidString, "first": first])
        task.reconnection = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1), maxDelay: .milliseconds(1), jitter: 0)
        let connection = try await task.connect()
        // The second connection echoes: a send queued while reconnecting goes out on it.
        try await connection.send("after the drop")
        #expect(try await nextMessage(connection) == .text("after the drop"))
        try await connection.close()
        #expect(events.runs.count == 2)
        #expect(events.runs.first?.last?.hasPrefix("webSocketClosed") == true)
    }

    @Test(arguments: ["close/1000", "close/1008", "close/4000", "bad-utf8"])
    func aCloseMeaningDoNotReconnectEndsTheConnection(_ first: String) async throws {
        let events = EventRecorder()
        let server = webSocketServer(try WebSocketServers.raw()) { $0.observers = [events] }
        var task = TestSocket(server: server, path: "once", queryParameters: ["id": UUID().uuidString, "first": first])
        task.reconnection = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1), maxDelay: .milliseconds(1), jitter: 0)
        let connection = try await task.connect()
        _ = await readAll(connection)
        #expect(events.runs.count == 1)
        await #expect(throws: ConveyError.self) { try await connection.send("too late") }
    }

    @Test func reconnectionGivesUpAfterItsAttemptsInARow() async throws {
        let events = EventRecorder()
        let server = webSocketServer(try WebSocketServers.raw()) { $0.observers = [events] }
        var task = TestSocket(server: server, path: "vanish-mid-frame")
        task.reconnection = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1), maxDelay: .milliseconds(1), jitter: 0)
        let connection = try await task.connect()
        let (_, error) = await readAll(connection)
        #expect(webSocketFailure(error)?.kind == .connectionLost)
        // The first connection and two reconnections, each dropped before a message.
        #expect(events.runs.count == 3)
    }

    @Test func theAppsCloseIsNeverFollowedByAReconnection() async throws {
        let events = EventRecorder()
        let server = webSocketServer(try WebSocketServers.raw()) { $0.observers = [events] }
        var task = TestSocket(server: server, path: "echo")
        task.reconnection = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1), maxDelay: .milliseconds(1), jitter: 0)
        let connection = try await task.connect()
        try await connection.close(code: 1001, reason: "leaving")
        #expect(await readAll(connection).error == nil)
        #expect(events.runs.count == 1)
    }

    @Test func aCloseCodeOrReasonThatCannotBeSentIsRefused() async throws {
        let server = webSocketServer(try WebSocketServers.raw())
        let connection = try await TestSocket(server: server, path: "echo").connect()
        for code in [999, 1005, 1006, 1015, 5000] {
            await #expect(throws: ConveyError.webSocket(.invalidArgument, url: connection.handshake?.url, closeCode: nil,
                                                        reason: "the close code \(code) may not be sent: use 1000–1003, 1007–1014 or 3000–4999")) {
                try await connection.close(code: code)
            }
        }
        await #expect(throws: ConveyError.self) { try await connection.close(reason: String(repeating: "x", count: 124)) }
        try await connection.close()
    }

    @Test func aWebSocketTaskRunAsARequestFailsBeforeSending() async throws {
        let server = webSocketServer(try WebSocketServers.raw())
        do {
            _ = try await downloadAnyTask(TestSocket(server: server, path: "echo"))
            Issue.record("the run should have failed")
        } catch {
            #expect(webSocketFailure(error)?.kind == .notARequest)
        }
        await #expect(throws: ConveyError.self) { _ = try await TestSocket(server: server, path: "echo").stream() }
    }

    /// `download()` as generic code that knows only `DownloadingTask` calls it.
    private func downloadAnyTask<Task: DownloadingTask>(_ task: Task) async throws -> ServerResponse<Task.DownloadPayload> {
        try await task.download()
    }

    @Test func urlSessionRefusesWebSocketsUpFront() async throws {
        let server = webSocketServer(try WebSocketServers.raw())
        server.transport = URLSessionTransport()
        do {
            _ = try await TestSocket(server: server, path: "echo").connect()
            Issue.record("the connect should have failed")
        } catch {
            #expect(webSocketFailure(error)?.kind == .unsupportedTransport)
            #expect((error as? ConveyError)?.logDetail.contains("Use CurlTransport") == true)
        }
    }
}
#endif
