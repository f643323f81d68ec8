import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct StreamLine: Decodable {
    let id: Int
    let url: String
}

/// Byte streams and lines on the wire, once per transport that streams: httpbin's `/stream` and
/// `/drip`, and the event server's endless stream for back-pressure and cancellation; on Linux,
/// URLSession's refusal. Serialized: several tests read the event server's totals for an endless stream.
@Suite("Response streams on the wire", .wire, .serialized)
@ConveyActor
struct ResponseStreamWireTests {
    @Test(arguments: TransportKind.streaming)
    func chunksMakeUpTheWholeBody(_ kind: TransportKind) async throws {
        let server = streamingServer(kind, remote: try TestServers.httpbin())
        let response = try await StreamedGet(server: server, path: "stream/20").stream()
        #expect(response.statusCode == 200)
        #expect(response.data.isEmpty)
        var body = Data()
        var chunks = 0
        for try await chunk in response.payload {
            body.append(chunk)
            chunks += 1
        }
        #expect(chunks >= 1)
        let lines = String(decoding: body, as: UTF8.self).split(separator: "\n")
        #expect(try lines.map { try JSONDecoder().decode(StreamLine.self, from: Data($0.utf8)).id } == Array(0..<20))
    }

    @Test(arguments: TransportKind.streaming)
    func linesComeOneByOne(_ kind: TransportKind) async throws {
        let server = streamingServer(kind, remote: try TestServers.httpbin())
        var ids: [Int] = []
        for try await line in try await StreamedGet(server: server, path: "stream/12").stream().payload.lines {
            let decoded = try JSONDecoder().decode(StreamLine.self, from: Data(line.utf8))
            #expect(decoded.url.hasSuffix("/stream/12"))
            ids.append(decoded.id)
        }
        #expect(ids == Array(0..<12))
    }

    @Test(arguments: TransportKind.streaming)
    func aDripArrivesWhole(_ kind: TransportKind) async throws {
        let server = streamingServer(kind, remote: try TestServers.httpbin())
        let response = try await StreamedGet(server: server, path: "drip",
                                             queryParameters: ["numbytes": "6", "duration": "0.6", "delay": "0"]).stream()
        var lines: [String] = []
        for try await line in response.payload.lines { lines.append(line) }
        #expect(lines == ["******"])
    }

    @Test(arguments: TransportKind.streaming)
    func anErrorStatusIsAnHTTPErrorWithTheStartOfItsBody(_ kind: TransportKind) async throws {
        let server = streamingServer(kind, remote: try TestServers.httpbin())
        let error = try await #require(throws: HTTPError.self) {
            try await StreamedGet(server: server, path: "status/418").stream()
        }
        #expect(error.statusCode == 418)
        #expect(String(decoding: error.body, as: UTF8.self).contains("teapot"))
    }

    @Test(arguments: TransportKind.streaming)
    func aSlowReaderOfAFastStreamKeepsMemoryBounded(_ kind: TransportKind) async throws {
        let key = UUID().uuidString
        let server = streamingServer(kind, remote: try TestServers.events())
        let response = try await StreamedGet(server: server, path: "endless", queryParameters: ["key": key, "size": "1024"]).stream()
        var chunks = response.payload.makeAsyncIterator()
        _ = try await chunks.next()
        // The reader takes nothing: the transport pauses, the server's writes stall. What the
        // server could not send is nowhere in this process (the process's memory is measured
        // in a child process: MemoryBoundedStreamTests).
        let stalled = try await EventServerStats.waitForStall(key: key)
        #expect(stalled.sent < 64 << 20, "the server got \(stalled.sent) bytes out to a reader that took one chunk")
        for _ in 0..<500 { _ = try await chunks.next() }
        response.payload.cancel()
    }

    #if canImport(FoundationNetworking)
    @Test func urlSessionOnLinuxRefusesStreamsAndEventsAndSaysWhy() async throws {
        let key = UUID().uuidString
        let server = streamingServer(.urlSession, remote: try TestServers.events())
        let streamError = try await #require(throws: ConveyError.self) {
            try await StreamedGet(server: server, path: "endless", queryParameters: ["key": key]).stream()
        }
        let waits = RecordedWaits()
        let eventsError = try await #require(throws: ConveyError.self) {
            for try await _ in StreamedGet(server: server, path: "endless", queryParameters: ["key": key])
                .events(ServerSentEvents.Configuration().sleeping(with: waits.sleep)) {}
        }
        for error in [streamError, eventsError] {
            guard let failure = error.transportFailure else {
                Issue.record("expected a transport failure, got \(error)")
                continue
            }
            #expect(failure.kind == .other)
            #expect(failure.reason.contains("CurlTransport"))
            #expect(failure.url?.path == "/endless")
        }
        // Refused before anything went out, and never retried or reconnected.
        #expect(waits.durations.isEmpty)
        #expect(try await EventServerStats.fetch(key: key).requests == 0)
    }
    #endif

    @Test(arguments: TransportKind.streaming)
    func cancelEndsTheLoopWithCancellationNotACleanEnd(_ kind: TransportKind) async throws {
        let key = UUID().uuidString
        let server = streamingServer(kind, remote: try TestServers.events())
        let response = try await StreamedGet(server: server, path: "endless", queryParameters: ["key": key]).stream()
        var chunks = response.payload.makeAsyncIterator()
        #expect(try await chunks.next() != nil)
        response.payload.cancel()
        do {
            let chunk = try await chunks.next()
            Issue.record("a cancelled stream went on as if whole: \(String(describing: chunk))")
        } catch ConveyError.cancelled {
            // What the reader should see.
        }
        // Told once; afterwards the stream has ended.
        #expect(try await chunks.next() == nil)
        #expect(try await EventServerStats.wait(key: key) { $0.disconnects > 0 }.disconnects == 1)
    }

    @Test(arguments: TransportKind.streaming)
    func cancelAfterTheWholeBodyChangesNothing(_ kind: TransportKind) async throws {
        let server = streamingServer(kind, remote: try TestServers.httpbin())
        let response = try await StreamedGet(server: server, path: "stream/3").stream()
        var lines = 0
        for try await _ in response.payload.lines { lines += 1 }
        response.payload.cancel()
        #expect(lines == 3)
    }

    @Test(arguments: TransportKind.streaming)
    func aStatusTheTasksRuleReturnsIsStreamedWhole(_ kind: TransportKind) async throws {
        struct Lenient: ServerTask {
            let server: ConveyServer
            var path: String { "no-such-file" }
            var statusRule: StatusRule { .standard.returning(404) }
        }
        let server = streamingServer(kind, remote: try TestServers.nginx())
        let response = try await Lenient(server: server).stream()
        #expect(response.statusCode == 404)
        var body = Data()
        for try await chunk in response.payload { body.append(chunk) }
        #expect(String(decoding: body, as: UTF8.self).contains("404 Not Found"))
    }

    @Test(arguments: TransportKind.streaming)
    func aTasksStatusRuleThrowsWithTheBodyWhereTheServerWouldNot(_ kind: TransportKind) async throws {
        struct Strict: ServerTask {
            let server: ConveyServer
            var path: String { "status/418" }
            var statusRule: StatusRule { .standard }
        }
        let server = streamingServer(kind, remote: try TestServers.httpbin()) { $0.reportBadHTTPStatusAsError = false }
        let error = try await #require(throws: HTTPError.self) { try await Strict(server: server).stream() }
        #expect(error.statusCode == 418)
        #expect(String(decoding: error.body, as: UTF8.self).contains("teapot"))
    }

    @Test(arguments: TransportKind.streaming)
    func cancellingTheReaderEndsTheTransfer(_ kind: TransportKind) async throws {
        let key = UUID().uuidString
        let server = streamingServer(kind, remote: try TestServers.events())
        let response = try await StreamedGet(server: server, path: "endless", queryParameters: ["key": key]).stream()
        let reader = Task {
            var chunks = 0
            for try await _ in response.payload { chunks += 1 }
            return chunks
        }
        _ = try await EventServerStats.wait(key: key) { $0.sent > 0 }
        reader.cancel()
        let outcome = await reader.result
        #expect(throws: ConveyError.self) { try outcome.get() }
        let stats = try await EventServerStats.wait(key: key) { $0.disconnects > 0 }
        #expect(stats.disconnects == 1)
    }

    @Test(arguments: TransportKind.streaming)
    func leavingTheLoopEndsTheTransfer(_ kind: TransportKind) async throws {
        let key = UUID().uuidString
        let server = streamingServer(kind, remote: try TestServers.events())
        let response = try await StreamedGet(server: server, path: "endless", queryParameters: ["key": key]).stream()
        var lines = 0
        for try await _ in response.payload.lines {
            lines += 1
            if lines == 3 { break }
        }
        #expect(lines == 3)
        let stats = try await EventServerStats.wait(key: key) { $0.disconnects > 0 }
        #expect(stats.disconnects == 1)
        var more = 0
        for try await _ in response.payload { more += 1 }
        #expect(more == 0)
    }

    @Test(arguments: TransportKind.streaming)
    func theIdleTimeoutAppliesBetweenChunks(_ kind: TransportKind) async throws {
        let server = streamingServer(kind, remote: try TestServers.httpbin())
        let response = try await StreamedGet(server: server, path: "drip",
                                             queryParameters: ["numbytes": "3", "duration": "6", "delay": "0"],
                                             configuration: TaskConfiguration(timeout: .milliseconds(700))).stream()
        let error = try await #require(throws: ConveyError.self) {
            for try await _ in response.payload {}
        }
        guard let failure = error.timeout else {
            Issue.record("expected a timeout, got \(error)")
            return
        }
        #expect(failure.isTotal == false)
        #expect(failure.url?.path == "/drip")
    }

    @Test(arguments: TransportKind.streaming)
    func theTotalTimeoutCoversTheBodyOnlyWhenAsked(_ kind: TransportKind) async throws {
        // Bytes at 0, 2 and 4 s: the body outlasts both limits below, the head (at once) does not.
        let slow = ["numbytes": "3", "duration": "6", "delay": "0"]
        let server = streamingServer(kind, remote: try TestServers.httpbin()) { $0.defaultTotalTimeout = .seconds(3) }
        var body = Data()
        for try await chunk in try await StreamedGet(server: server, path: "drip", queryParameters: slow).stream().payload {
            body.append(chunk)
        }
        #expect(body == Data("***".utf8))

        // A server of its own: httpbin's connection stays busy for a while after a drip's last byte.
        let other = streamingServer(kind, remote: try TestServers.httpbin())
        let error = try await #require(throws: ConveyError.self) {
            let limited = try await StreamedGet(server: other, path: "drip", queryParameters: slow).stream(totalTimeout: .seconds(1))
            for try await _ in limited.payload {}
        }
        guard let failure = error.timeout else {
            Issue.record("expected a timeout, got \(error)")
            return
        }
        #expect(failure.isTotal == true)
        #expect(failure.limit == .seconds(1))
    }
}
