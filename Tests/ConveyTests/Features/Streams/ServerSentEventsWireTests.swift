import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Numbered: Decodable {
    let n: Int
}

/// Server-sent events against scripts/event-server.py, once per transport: parsing, reconnection
/// with `Last-Event-ID` and `retry:`, and the ways a reader stops. Reconnection waits are recorded,
/// never slept.
@Suite("Server-sent events on the wire", .wire)
@ConveyActor
struct ServerSentEventsWireTests {
    @Test(arguments: TransportKind.streaming)
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

    @Test(arguments: TransportKind.streaming)
    func aDroppedConnectionResumesAfterTheLastEventIDUntilA204(_ kind: TransportKind) async throws {
        let key = UUID().uuidString
        let server = streamingServer(kind, remote: try TestServers.events())
        let task = StreamedGet(server: server, path: "drop", queryParameters: ["key": key, "after": "2", "total": "7"])
        let waits = RecordedWaits()
        var ids: [String] = []
        for try await event in task.events(ServerSentEvents.Configuration(reconnectionTime: .seconds(3)).sleeping(with: waits.sleep)) {
            ids.append(event.id)
        }
        #expect(ids == (1...7).map(String.init))
        let stats = try await EventServerStats.fetch(key: key)
        #expect(stats.lastEventIDs == [nil, "2", "4", "6", "7"])
        #expect(waits.durations == Array(repeating: .seconds(3), count: 4))
    }

    @Test(arguments: TransportKind.streaming)
    func aReaderCanResumeAfterAKnownEvent(_ kind: TransportKind) async throws {
        let key = UUID().uuidString
        let server = streamingServer(kind, remote: try TestServers.events())
        let task = StreamedGet(server: server, path: "drop", queryParameters: ["key": key, "after": "2", "total": "7"])
        let waits = RecordedWaits()
        var ids: [String] = []
        for try await event in task.events(ServerSentEvents.Configuration(lastEventID: "4").sleeping(with: waits.sleep)) {
            ids.append(event.id)
        }
        #expect(ids == ["5", "6", "7"])
        #expect(try await EventServerStats.fetch(key: key).lastEventIDs == ["4", "6", "7"])
    }

    @Test(arguments: TransportKind.streaming)
    func theServersRetryFieldSetsTheWait(_ kind: TransportKind) async throws {
        let server = streamingServer(kind, remote: try TestServers.events())
        let task = StreamedGet(server: server, path: "retry", queryParameters: ["ms": "1234", "count": "1"])
        let waits = RecordedWaits()
        var received = 0
        for try await event in task.events(ServerSentEvents.Configuration().sleeping(with: waits.sleep)) {
            #expect(event.id == "1")
            received += 1
            if received == 3 { break }
        }
        #expect(waits.durations == [.milliseconds(1234), .milliseconds(1234)])
    }

    @Test(arguments: TransportKind.streaming)
    func noContentEndsTheEvents(_ kind: TransportKind) async throws {
        let key = UUID().uuidString
        let server = streamingServer(kind, remote: try TestServers.events())
        let waits = RecordedWaits()
        var received = 0
        for try await _ in StreamedGet(server: server, path: "nocontent", queryParameters: ["key": key])
            .events(ServerSentEvents.Configuration().sleeping(with: waits.sleep)) {
            received += 1
        }
        #expect(received == 0)
        #expect(waits.durations.isEmpty)
        #expect(try await EventServerStats.fetch(key: key).requests == 1)
    }

    @Test(arguments: TransportKind.streaming)
    func aResponseThatIsNotAnEventStreamIsAnError(_ kind: TransportKind) async throws {
        let server = streamingServer(kind, remote: try TestServers.httpbin())
        let error = try await #require(throws: ConveyError.self) {
            for try await _ in StreamedGet(server: server, path: "get").events() {}
        }
        guard let failure = error.decodingFailure else {
            Issue.record("expected a decoding failure, got \(error)")
            return
        }
        #expect(failure.reason.contains("application/json"))
    }

    @Test(arguments: TransportKind.streaming)
    func anUnreachableServerIsRetriedThenReported(_ kind: TransportKind) async throws {
        let closed = try #require(URL(string: "http://127.0.0.1:1"))
        let server = streamingServer(kind, remote: Remote(name: "closed", url: closed))
        let waits = RecordedWaits()
        let configuration = ServerSentEvents.Configuration(reconnectionTime: .milliseconds(10), maximumConsecutiveFailures: 4)
                                                           .sleeping(with: waits.sleep)
        let error = try await #require(throws: ConveyError.self) {
            for try await _ in StreamedGet(server: server, path: "events").events(configuration) {}
        }
        guard case .transport = error else {
            Issue.record("expected a transport failure, got \(error)")
            return
        }
        // 10 ms is under the floor; each failure in a row doubles the wait.
        #expect(waits.durations == [.seconds(1), .seconds(2), .seconds(4)])
    }

    @Test(arguments: TransportKind.streaming)
    func aReconnectStormBacksOffBetweenTheFloorAndTheCap(_ kind: TransportKind) async throws {
        // `retry: 0`, then a close without an event, on every connection.
        let key = UUID().uuidString
        let server = streamingServer(kind, remote: try TestServers.events())
        let waits = RecordedWaits(limit: 9)
        let error = try await #require(throws: ConveyError.self) {
            for try await _ in StreamedGet(server: server, path: "storm", queryParameters: ["key": key])
                .events(ServerSentEvents.Configuration().sleeping(with: waits.sleep)) {}
        }
        guard case .cancelled = error else {
            Issue.record("expected the recorded waits to stop the reader, got \(error)")
            return
        }
        let requested = waits.durations
        #expect(requested == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60].map { Duration.seconds($0) })
        #expect(requested.allSatisfy { $0 >= .seconds(1) && $0 <= .seconds(60) })
        // One connection before the first wait and one after each wait but the last, which stopped the reader.
        #expect(try await EventServerStats.fetch(key: key).requests == requested.count)
    }

    @Test(arguments: TransportKind.streaming)
    func aHugeRetryIsCappedAndAZeroRetryFloored(_ kind: TransportKind) async throws {
        let server = streamingServer(kind, remote: try TestServers.events())
        for (milliseconds, expected) in [("99999999999999999999", Duration.seconds(60)), ("0", .seconds(1))] {
            let waits = RecordedWaits()
            var received = 0
            for try await _ in StreamedGet(server: server, path: "retry", queryParameters: ["ms": milliseconds, "count": "1"])
                .events(ServerSentEvents.Configuration().sleeping(with: waits.sleep)) {
                received += 1
                if received == 3 { break }
            }
            // Every connection brings an event, so the wait never grows.
            #expect(waits.durations == [expected, expected], "retry: \(milliseconds)")
        }
    }

    @Test(arguments: TransportKind.streaming)
    func credentialsDoNotFollowAReconnectionToAnotherOrigin(_ kind: TransportKind) async throws {
        // Every connection goes to httpbin, which redirects it to the event server: another origin.
        let target = try #require(TestServers.eventsURL).absoluteString + "/headers"
        let server = streamingServer(kind, remote: try TestServers.httpbin())
        let task = StreamedGet(server: server, path: "redirect-to", queryParameters: ["url": target, "status_code": "307"],
                               headers: CredentialFields.sent)
        let waits = RecordedWaits()
        var received: [[String: String]] = []
        for try await event in task.events(ServerSentEvents.Configuration().sleeping(with: waits.sleep)) {
            received.append(try event.decoded(as: [String: String].self))
            if received.count == 2 { break }
        }
        #expect(waits.durations.count == 1)
        for fields in received {
            #expect(fields["x-other"] == "kept")
            #expect(CredentialFields.credentialNames.filter { fields[$0] != nil } == [])
        }
    }
}
