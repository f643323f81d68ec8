import Foundation
import Testing
@testable import Convey

private struct Numbered: Decodable {
    let n: Int
}

/// Server-sent events against scripts/event-server.py, once per transport: parsing, reconnection
/// with `Last-Event-ID` and `retry:`, and the ways a reader stops. Reconnection waits are recorded,
/// never slept.
@Suite("Server-sent events on the wire", .wire)
@ConveyActor
struct ServerSentEventsWireTests {
    @Test(arguments: TransportKind.allCases)
    func eventsArriveInOrderAndDecode(_ kind: TransportKind) async throws {
        let server = streamingServer(kind, remote: try TestServers.events())
        let task = StreamedGet(server: server, path: "events", queryParameters: ["count": "50", "size": "100"])
        var numbers: [Int] = []
        for try await event in task.events(ServerSentEvents.Configuration(reconnects: false)) {
            #expect(event.type == "message")
            #expect(event.id == String(numbers.count + 1))
            numbers.append(try event.decoded(as: Numbered.self).n)
        }
        #expect(numbers == Array(1...50))
    }

    @Test(arguments: TransportKind.allCases)
    func aDroppedConnectionResumesAfterTheLastEventIDUntilA204(_ kind: TransportKind) async throws {
        let key = UUID().uuidString
        let server = streamingServer(kind, remote: try TestServers.events())
        let task = StreamedGet(server: server, path: "drop", queryParameters: ["key": key, "after": "2", "total": "7"])
        let waits = RecordedWaits()
        var ids: [String] = []
        for try await event in task.events(ServerSentEvents.Configuration(reconnectionTime: .seconds(3), sleep: waits.sleep)) {
            ids.append(event.id)
        }
        #expect(ids == (1...7).map(String.init))
        let stats = try await EventServerStats.fetch(key: key)
        #expect(stats.lastEventIDs == [nil, "2", "4", "6", "7"])
        #expect(waits.durations == Array(repeating: .seconds(3), count: 4))
    }

    @Test(arguments: TransportKind.allCases)
    func aReaderCanResumeAfterAKnownEvent(_ kind: TransportKind) async throws {
        let key = UUID().uuidString
        let server = streamingServer(kind, remote: try TestServers.events())
        let task = StreamedGet(server: server, path: "drop", queryParameters: ["key": key, "after": "2", "total": "7"])
        let waits = RecordedWaits()
        var ids: [String] = []
        for try await event in task.events(ServerSentEvents.Configuration(lastEventID: "4", sleep: waits.sleep)) {
            ids.append(event.id)
        }
        #expect(ids == ["5", "6", "7"])
        #expect(try await EventServerStats.fetch(key: key).lastEventIDs == ["4", "6", "7"])
    }

    @Test(arguments: TransportKind.allCases)
    func theServersRetryFieldSetsTheWait(_ kind: TransportKind) async throws {
        let server = streamingServer(kind, remote: try TestServers.events())
        let task = StreamedGet(server: server, path: "retry", queryParameters: ["ms": "1234", "count": "1"])
        let waits = RecordedWaits()
        var received = 0
        for try await event in task.events(ServerSentEvents.Configuration(sleep: waits.sleep)) {
            #expect(event.id == "1")
            received += 1
            if received == 3 { break }
        }
        #expect(waits.durations == [.milliseconds(1234), .milliseconds(1234)])
    }

    @Test(arguments: TransportKind.allCases)
    func noContentEndsTheEvents(_ kind: TransportKind) async throws {
        let key = UUID().uuidString
        let server = streamingServer(kind, remote: try TestServers.events())
        let waits = RecordedWaits()
        var received = 0
        for try await _ in StreamedGet(server: server, path: "nocontent", queryParameters: ["key": key])
            .events(ServerSentEvents.Configuration(sleep: waits.sleep)) {
            received += 1
        }
        #expect(received == 0)
        #expect(waits.durations.isEmpty)
        #expect(try await EventServerStats.fetch(key: key).requests == 1)
    }

    @Test(arguments: TransportKind.allCases)
    func aResponseThatIsNotAnEventStreamIsAnError(_ kind: TransportKind) async throws {
        let server = streamingServer(kind, remote: try TestServers.httpbin())
        let error = try await #require(throws: ConveyError.self) {
            for try await _ in StreamedGet(server: server, path: "get").events() {}
        }
        guard case .decodingFailed(let failure) = error else {
            Issue.record("expected a decoding failure, got \(error)")
            return
        }
        #expect(failure.reason.contains("application/json"))
    }

    @Test(arguments: TransportKind.allCases)
    func anUnreachableServerIsRetriedThenReported(_ kind: TransportKind) async throws {
        let closed = try #require(URL(string: "http://127.0.0.1:1"))
        let server = streamingServer(kind, remote: Remote(name: "closed", url: closed))
        let waits = RecordedWaits()
        let configuration = ServerSentEvents.Configuration(reconnectionTime: .milliseconds(10), maximumConsecutiveFailures: 3,
                                                           sleep: waits.sleep)
        let error = try await #require(throws: ConveyError.self) {
            for try await _ in StreamedGet(server: server, path: "events").events(configuration) {}
        }
        guard case .transport = error else {
            Issue.record("expected a transport failure, got \(error)")
            return
        }
        #expect(waits.durations == [.milliseconds(10), .milliseconds(10)])
    }
}
