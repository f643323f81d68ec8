import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

// Docs/websockets.md's chat example, exactly as the page shows it: the tests below check that the
// page still shows it whole, and run it against the chat rooms of scripts/ws-echo-server.py.

// websockets:chat:begin
/// A chat room's socket: `wss://…/rooms/{room}/socket` on the app's server, with its credentials.
struct ChatSocket: WebSocketTask {
    let server: ConveyServer
    let room: String

    var path: String { "rooms/\(room)/socket" }
    var subprotocols: [String] { ["chat"] }
    // A connection that stops answering is closed within 40 s, and opened again.
    var pingInterval: Duration? { .seconds(30) }
    var reconnection: RetryPolicy? { RetryPolicy(maxAttempts: 5, baseDelay: .seconds(1), maxDelay: .seconds(30)) }
}

/// One line of the chat, as JSON in a text message.
struct ChatLine: Codable, Sendable, Equatable {
    let author: String
    let text: String
}

/// A chat room: lines go out as the user types them; lines that come in go to `show`.
final class ChatRoom: Sendable {
    let me: String
    private let connection: WebSocketConnection

    /// Joins `room` on `server` as `me`.
    init(_ room: String, as me: String, on server: ConveyServer) async throws {
        self.me = me
        connection = try await ChatSocket(server: server, room: room).connect()
    }

    func say(_ text: String) async throws {
        let line = try JSONEncoder().encode(ChatLine(author: me, text: text))
        try await connection.send(String(decoding: line, as: UTF8.self))
    }

    /// Shows each line until the room closes; throws how the connection failed. Cancelling the
    /// task that listens leaves the room (the connection closes with 1001).
    func listen(_ show: @Sendable (ChatLine) async -> Void) async throws {
        for try await message in connection.messages {
            guard case .text(let text) = message,
                  let line = try? JSONDecoder().decode(ChatLine.self, from: Data(text.utf8)) else { continue }
            await show(line)
        }
    }

    func leave() async throws {
        try await connection.close(code: 1000, reason: "bye")
    }
}
// websockets:chat:end

@Suite("The WebSockets page's example")
struct WebSocketDocsExampleTests {
    private static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func thePageShowsTheExampleWhole() throws {
        let source = try String(contentsOf: URL(filePath: #filePath), encoding: .utf8)
        let start = try #require(source.range(of: "// websockets:chat:begin\n")).upperBound
        let end = try #require(source.range(of: "// websockets:chat:end", range: start..<source.endIndex)).lowerBound
        let page = try String(contentsOf: Self.root.appending(path: "Docs/websockets.md"), encoding: .utf8)
        #expect(page.contains("```swift\n" + source[start..<end] + "```\n"), "Docs/websockets.md no longer shows the chat example")
    }

    #if os(Linux) && canImport(CConveyCurlShim)
    @Test(.wire) @ConveyActor func twoPeopleChatInARoom() async throws {
        let server = webSocketServer(try WebSocketServers.echo())
        let room = "docs-\(UUID().uuidString)"
        let alice = try await ChatRoom(room, as: "alice", on: server)
        let bob = try await ChatRoom(room, as: "bob", on: server)
        let (lines, shown) = AsyncStream<ChatLine>.makeStream()
        let listening = Task {
            try await bob.listen { shown.yield($0) }
            shown.finish()
        }
        var heard = lines.makeAsyncIterator()
        // Bob hears his own line once the room has him: only then is alice's sure to reach him.
        try await bob.say("anyone here?")
        #expect(await heard.next() == ChatLine(author: "bob", text: "anyone here?"))
        try await alice.say("hello, bob")
        #expect(await heard.next() == ChatLine(author: "alice", text: "hello, bob"))
        try await alice.leave()
        try await bob.leave()
        try await listening.value
        #expect(await heard.next() == nil)
    }
    #endif
}
