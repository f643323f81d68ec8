#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// WebSocket tasks against the `websockets` package's server: echo, compression, the handshake's
/// fields, TLS, a proxy, authentication and the close handshake.
@Suite("WebSocket echo", .wire)
@ConveyActor
struct WebSocketEchoTests {
    @Test func textAndBinaryMessagesEchoWithPermessageDeflate() async throws {
        let server = webSocketServer(try WebSocketServers.echo())
        let connection = try await TestSocket(server: server, path: "echo").connect()
        #expect(connection.extensions == ["permessage-deflate; server_max_window_bits=12; client_max_window_bits=12"])
        #expect(connection.handshake?.statusCode == 101)
        try await connection.send("hello")
        try await connection.send(Data([0, 1, 2, 255]))
        var messages = connection.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("hello"))
        #expect(try await messages.next() == .binary(Data([0, 1, 2, 255])))
        try await connection.close()
        #expect(try await messages.next() == nil)
        #expect(connection.closeCode == 1000)
    }
}
#endif
