import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The outbox against scripts/idempotency-server.py, on each transport.
@Suite("Outbox on the wire", .idempotencyServer)
@ConveyActor
struct OutboxWireTests {
    struct Post: DataUploadingTask {
        let server: ConveyServer
        let path: String
        var method: HTTPMethod { .post }
        var uploadPayload: Data? { Data("order for \(path)".utf8) }
    }

    func server(_ transport: TransportKind) throws -> CredentialedServer {
        let server = CredentialedServer(remote: Remote(name: "idempotency", string: try IdempotencyServer.base()),
                                        configuration: ServerConfiguration(echoSink: { _ in }))
        server.transport = transport.make()
        return server
    }

    @Test(arguments: TransportKind.allCases)
    func aLostAnswerIsRetriedWithTheSameKeyAndTheServerActsOnce(transport: TransportKind) async throws {
        let scratch = OutboxScratch()
        defer { scratch.remove() }
        let server = try server(transport)
        let clock = ManualOutboxClock()
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        let endpoint = try IdempotencyServer.endpoint(fault: "drop-after-act/2")
        let path = try #require(URL(string: endpoint)).path()
        let item = try await outbox.enqueue(Post(server: server, path: path))
        try await outbox.deliverPending()

        let delivered = try #require(outbox.item(id: item.id))
        #expect(delivered.state.name == "delivered 201")
        #expect(delivered.attempts == 3)
        let stats = try await IdempotencyServer.stats(key: item.idempotencyKey)
        #expect(stats["processed"] == 1)
        #expect(stats["replays"] == 2)
        #expect(try await IdempotencyServer.keys(on: endpoint) == Array(repeating: item.idempotencyKey, count: 3))
        struct Answer: Decodable { let key: String }
        #expect(try delivered.payload(as: Answer.self).key == item.idempotencyKey)
    }

    @Test(arguments: TransportKind.allCases)
    func unavailableWithRetryAfterThenDeliveredInOrder(transport: TransportKind) async throws {
        let scratch = OutboxScratch()
        defer { scratch.remove() }
        let server = try server(transport)
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
        let busy = try #require(URL(string: try IdempotencyServer.endpoint(fault: "503/2"))).path()
        let fine = try #require(URL(string: try IdempotencyServer.endpoint())).path()
        let first = try await outbox.enqueue(Post(server: server, path: busy + "?retry-after=7"))
        let second = try await outbox.enqueue(Post(server: server, path: fine))
        let changes = outbox.changes()
        try await outbox.deliverPending()
        var finished: [String] = []
        for await change in changes where change.isFinished {
            finished.append(change.id)
            if finished.count == 2 { break }
        }
        #expect(finished == [first.id, second.id])
        #expect(outbox.item(id: first.id)?.attempts == 3)
        #expect(try await IdempotencyServer.stats(key: first.idempotencyKey)["processed"] == 1)
        #expect(try await IdempotencyServer.stats(key: second.idempotencyKey)["processed"] == 1)
    }
}
