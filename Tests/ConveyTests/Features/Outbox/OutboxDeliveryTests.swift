import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Outbox: delivery")
@ConveyActor
struct OutboxDeliveryTests {
    let scratch = OutboxScratch()
    let clock = ManualOutboxClock()

    func outbox(_ server: ConveyServer, configure: (inout Outbox.Configuration) -> Void = { _ in }) async throws -> Outbox {
        try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock, configure: configure))
    }

    @Test func everyAttemptSendsTheSameKeyAndTheItemIsDeliveredWithTheResponse() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(503), .fail(.connectionLost), .status(500), .status(201, body: #"{"id":7}"#)])
        let server = try outboxServer(answers)
        let outbox = try await outbox(server)
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        try await outbox.deliverPending()

        #expect(answers.keys() == Array(repeating: item.idempotencyKey, count: 4))
        let delivered = try #require(outbox.item(id: item.id))
        #expect(delivered.state.name == "delivered 201")
        #expect(delivered.attempts == 4)
        struct Created: Decodable { let id: Int }
        #expect(try delivered.payload(as: Created.self).id == 7)
        // Backoff between attempts: 1 s, 2 s, 4 s less up to 20 % jitter.
        let waits = clock.waits.filter { $0 > 0 }
        #expect(waits.count == 3)
        for (wait, base) in zip(waits, [1.0, 2.0, 4.0]) { #expect(wait <= base && wait >= base * 0.8 - 0.001) }
    }

    /// The spans of an item's delivery carry the name of the task the app queued, not of the task
    /// that delivers it.
    @Test func anItemsSpansAreNamedAfterTheQueuedTask() async throws {
        defer { scratch.remove() }
        let spans = SpanCollector()
        let answers = ScriptedAnswers([.status(201)])
        let server = try outboxServer(answers) { $0.tracing = TracingConfiguration(exporter: spans) }
        let outbox = try await outbox(server)
        try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        try await outbox.deliverPending()

        #expect(spans.runSpans.map(\.name) == ["PlaceOrder"])
        #expect(spans.clientSpans.map(\.name) == ["POST"])
    }

    @Test func theSameKeyIsSentAfterARestart() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(503), .status(200)])
        let server = try outboxServer(answers)
        let first = try await outbox(server)
        let item = try await first.enqueue(PlaceOrder(server: server, item: "tea"))
        try await first.deliverPending(once: true)
        #expect(first.item(id: item.id)?.state.name == "pending")

        let restarted = try await outbox(server)
        #expect(restarted.item(id: item.id)?.attempts == 1)
        try await restarted.deliverPending(once: true)
        #expect(answers.keys() == [item.idempotencyKey, item.idempotencyKey])
        #expect(restarted.item(id: item.id)?.state.name == "delivered 200")
        #expect(restarted.item(id: item.id)?.attempts == 2)
    }

    @Test func itemsGoOutInEnqueueOrderAndALaterOneNeverOvertakesOneWaitingToRetry() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(200)], perPath: ["/v1/orders/0": [.status(503), .status(503), .status(200)]])
        let server = try outboxServer(answers)
        let outbox = try await outbox(server)
        for index in 0..<5 { try await outbox.enqueue(PlaceOrder(server: server, item: "\(index)")) }
        try await outbox.deliverPending()
        #expect(answers.paths() == ["/v1/orders/0", "/v1/orders/0", "/v1/orders/0", "/v1/orders/1", "/v1/orders/2", "/v1/orders/3", "/v1/orders/4"])
        #expect(outbox.items.allSatisfy { $0.state.name == "delivered 200" })
    }

    @Test func aStatusNotRetriedFailsTheItemWhichIsKeptForRetryOrDrop() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(422, body: "bad order"), .status(201)])
        let server = try outboxServer(answers)
        let outbox = try await outbox(server)
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        try await outbox.deliverPending()
        let failed = try #require(outbox.item(id: item.id))
        guard case .failed(let error) = failed.state, let http = error as? HTTPError else {
            Issue.record("expected an HTTPError, got \(failed.state.name)")
            return
        }
        #expect(http.statusCode == 422)
        #expect(http.bodyText == "bad order")
        #expect(answers.requests.count == 1)

        // Still failed, with its typed error, after a restart.
        let restarted = try await self.outbox(server)
        guard case .failed(let restored) = try #require(restarted.item(id: item.id)).state else { Issue.record("not failed"); return }
        #expect((restored as? HTTPError)?.statusCode == 422)

        try await restarted.retry(item.id)
        try await restarted.deliverPending()
        #expect(restarted.item(id: item.id)?.state.name == "delivered 201")
        #expect(answers.keys() == [item.idempotencyKey, item.idempotencyKey])
        try await restarted.drop(item.id)
        #expect(restarted.items.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.folder.path()).filter { !$0.hasPrefix(".") }.isEmpty)
    }

    @Test func retriesEndWithAttemptsExhaustedAndHonourRetryAfter() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(429, headers: ["Retry-After": "30"]), .status(503)])
        let server = try outboxServer(answers)
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: .seconds(2), maxDelay: .seconds(60), jitter: 0,
                                 retryableStatusCodes: [429, 503], retriesNonIdempotentMethods: true)
        let outbox = try await outbox(server) { $0.retryPolicy = policy }
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        try await outbox.deliverPending()
        #expect(clock.waits.filter { $0 > 0 } == [30, 4])
        guard case .failed(let error) = try #require(outbox.item(id: item.id)).state else { Issue.record("not failed"); return }
        guard case ConveyError.attemptsExhausted(let attempts, let lastError) = error else { Issue.record("\(error)"); return }
        #expect(attempts == 3)
        #expect(lastError.contains("503"))
    }

    @Test func hoursOfflineNeverSpendAttemptsButTheExpiryEndsThem() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.fail(.cannotConnect)])
        let server = try outboxServer(answers)
        let outbox = try await outbox(server) { $0.expiry = .seconds(3600) }
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        try await outbox.deliverPending()
        guard case .failed(let error) = try #require(outbox.item(id: item.id)).state,
              case ConveyError.expired = error else { Issue.record("not expired"); return }
        // Far more attempts than the policy's 10: offline attempts do not count; the waits grow to the 5-minute cap.
        #expect(answers.requests.count > 10)
        #expect(clock.waits.max() ?? 0 <= 300)
        #expect(clock.waits.max() ?? 0 >= 240)
    }

    @Test func aRefreshedCredentialIsAppliedAtSendTime() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(401), .status(200)])
        let server = try outboxServer(answers)
        server.refreshedToken = "tok-fresh-0003"
        let outbox = try await outbox(server)
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        try await outbox.deliverPending()
        #expect(server.refreshes == 1)
        #expect(answers.requests.map { $0.request.value(forHTTPHeaderField: "Authorization") } == ["Bearer tok-secret-0001", "Bearer tok-fresh-0003"])
        #expect(outbox.item(id: item.id)?.state.name == "delivered 200")
        #expect(outbox.item(id: item.id)?.attempts == 1)
    }

    @Test func hooksRunOncePerItemNotPerAttempt() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(200)], perPath: ["/v1/orders/a": [.status(500), .status(502), .status(200)],
                                                             "/v1/orders/b": [.status(500), .status(404)]])
        let server = try outboxServer(answers)
        let outbox = try await outbox(server)
        let events = EventLog()
        struct Watched: DataUploadingTask {
            let server: ConveyServer
            let name: String
            let events: EventLog
            var path: String { "orders/\(name)" }
            var method: HTTPMethod { .post }
            var uploadPayload: Data? { Data(name.utf8) }
            func didFinish(with response: ServerResponse<Data>) async { events.add("\(name) finished \(response.statusCode)") }
            func didFail(with error: any Error) async { events.add("\(name) failed") }
        }
        try await outbox.enqueue(Watched(server: server, name: "a", events: events))
        try await outbox.enqueue(Watched(server: server, name: "b", events: events))
        try await outbox.deliverPending()
        #expect(answers.requests.count == 5)
        #expect(events.events == ["a finished 200", "b failed"])
        #expect(server.finished.map(\.path) == ["orders/a", "orders/b"])
        #expect(server.finished.map { ($0.error as? HTTPError)?.statusCode } == [nil, 404])
    }

    @Test func observersSeeEachChangeAndOutcomeWaitsForTheEnd() async throws {
        defer { scratch.remove() }
        let server = try outboxServer(ScriptedAnswers([.status(503), .status(204)]))
        let outbox = try await outbox(server)
        let changes = outbox.changes()
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        async let outcome = outbox.outcome(of: item.id)
        try await outbox.deliverPending()
        #expect(try await outcome.state.name == "delivered 204")
        var seen: [String] = []
        for await change in changes {
            seen.append("\(change.state.name) \(change.attempts)")
            if change.isFinished { break }
        }
        #expect(seen == ["pending 0", "pending 1", "pending 1", "pending 2", "delivered 204 2"])
    }

    @Test func echoAndRecordingShowEachAttemptWithTheItemAndItsKey() async throws {
        defer { scratch.remove() }
        let echo = EchoCapture()
        let records = scratch.root.appending(path: "records")
        let recorder = TaskRecorder(folder: records)
        let server = try outboxServer(ScriptedAnswers([.status(503), .status(201)]), echo: echo) {
            $0.defaultEchoStyle = [.consoleMinimum, .recorded]
            $0.recorder = recorder
        }
        let outbox = try await outbox(server)
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))
        try await outbox.deliverPending()
        let lines = echo.text.split(separator: "\n").filter { $0.contains("outbox item") }
        #expect(lines.count == 2)
        #expect(lines.first?.contains("outbox item \(item.id) attempt 1, Idempotency-Key \(item.idempotencyKey)") == true)
        #expect(lines.last?.contains("attempt 2") == true)
        await recorder.flush()
        let recorded = await recorder.records()
        #expect(recorded.count == 2)
        #expect(recorded.allSatisfy { $0.outboxItem == item.id && $0.taskName == "PlaceOrder" })
        #expect(recorded.allSatisfy { Headers($0.requestFields)["Idempotency-Key"] == item.idempotencyKey })
        #expect(recorded.allSatisfy { Headers($0.requestFields)["Authorization"] == Redaction.mask })
    }

    @Test func severalAtOnceWhenAllowed() async throws {
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(200)])
        let server = try outboxServer(answers)
        let outbox = try await outbox(server) { $0.concurrency = 4 }
        for index in 0..<12 { try await outbox.enqueue(PlaceOrder(server: server, item: "\(index)")) }
        try await outbox.deliverPending()
        #expect(answers.requests.count == 12)
        #expect(outbox.items.allSatisfy { $0.state.name == "delivered 200" })
    }

    @Test func aSecondOwnerIsRefusedChangesWhileTheFirstDelivers() async throws {
        defer { scratch.remove() }
        let gate = AsyncStream<Void>.makeStream()
        let started = AsyncStream<Void>.makeStream()
        let server = try outboxServer(ScriptedAnswers([.status(200)]))
        server.transport = StubTransport { request in
            started.continuation.yield()
            for await _ in gate.stream { break }
            return TransportResponse(url: request.request.url, statusCode: 200, body: Data())
        }
        let first = try await outbox(server)
        let item = try await first.enqueue(PlaceOrder(server: server, item: "tea"))
        let delivering = Task { try await first.deliverPending() }
        for await _ in started.stream { break }
        let second = try await outbox(server)
        let refused = await #expect(throws: ConveyError.self) { try await second.drop(item.id) }
        guard case .outboxFolderInUse? = refused else { Issue.record("expected the folder in use, got \(String(describing: refused))"); return }
        gate.continuation.yield()
        try await delivering.value
        try await second.drop(item.id)
        #expect(second.items.isEmpty)
    }
}
