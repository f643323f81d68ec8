import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Outbox: enqueue")
@ConveyActor
struct OutboxEnqueueTests {
    @Test func enqueueWritesOneOwnerOnlyFileThatAnotherOutboxReadsBack() async throws {
        let scratch = OutboxScratch()
        defer { scratch.remove() }
        let server = try outboxServer(ScriptedAnswers([.status(201)]))
        let clock = ManualOutboxClock()
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        let item = try await outbox.enqueue(PlaceOrder(server: server, item: "tea"))

        let names = try FileManager.default.contentsOfDirectory(atPath: scratch.folder.path()).sorted()
        #expect(names == [item.id + ".item"])
        #expect(try permissions(of: scratch.folder.appending(path: item.id + ".item")) == 0o600)
        #expect(try permissions(of: scratch.folder) == 0o700)
        #expect(item.method == .post)
        #expect(item.url.absoluteString == "https://api.example/v1/orders/tea")
        #expect(item.idempotencyKey.hasPrefix("\"") && item.idempotencyKey.count == 38)

        let reopened = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock))
        let read = try #require(reopened.item(id: item.id))
        #expect(read.idempotencyKey == item.idempotencyKey)
        #expect(read.url == item.url)
        #expect(read.taskName == "PlaceOrder")
        #expect(read.state.name == "pending")
    }

    @Test func noCredentialTheServerSuppliesIsStoredAnywhereInTheFolder() async throws {
        let scratch = OutboxScratch()
        defer { scratch.remove() }
        let answers = ScriptedAnswers([.status(200, body: #"{"ok":true}"#)])
        let server = try outboxServer(answers)
        server.token = "tok-ABCDEF-secret"
        server.cookie = "session=cookie-XYZ-secret"
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
        try await outbox.enqueue(PlaceOrder(server: server, item: "coffee", extraHeaders: ["X-Trace": "visible"]))
        try await outbox.deliverPending()

        // Sent with the credentials, as the server supplies them at send time…
        let sent = try #require(answers.requests.first?.request)
        #expect(sent.value(forHTTPHeaderField: "Authorization") == "Bearer tok-ABCDEF-secret")
        #expect(sent.value(forHTTPHeaderField: "Cookie") == "session=cookie-XYZ-secret")
        #expect(sent.value(forHTTPHeaderField: "X-Trace") == "visible")
        // …and none of them on disk.
        let files = try scratch.allBytes()
        #expect(files.count >= 2)
        for file in files {
            let text = String(decoding: file.bytes, as: UTF8.self)
            #expect(!text.contains("tok-ABCDEF-secret"), "\(file.name)")
            #expect(!text.contains("cookie-XYZ-secret"), "\(file.name)")
            #expect(!text.contains("Authorization"), "\(file.name)")
        }
        #expect(files.contains { String(decoding: $0.bytes, as: UTF8.self).contains("visible") })
    }

    @Test func aCredentialTheTaskSetsItselfIsRefusedWithTheReason() async throws {
        let scratch = OutboxScratch()
        defer { scratch.remove() }
        let server = try outboxServer(ScriptedAnswers([.status(200)]))
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
        let ownToken = PlaceOrder(server: server, item: "tea", extraHeaders: ["Authorization": "Bearer task-own-password"])
        let apiKey = PlaceOrder(server: server, item: "tea", extraHeaders: ["X-API-Key": "k-123456"])

        await #expect(throws: ConveyError.credentialRefused(field: "header Authorization")) { try await outbox.enqueue(ownToken) }
        await #expect(throws: ConveyError.credentialRefused(field: "header X-API-Key")) { try await outbox.enqueue(apiKey) }
        do {
            try await outbox.enqueue(ownToken)
        } catch let failure as ConveyError {
            guard case .credentialRefused = failure else { Issue.record("expected a refused credential, got \(failure)"); return }
            #expect(failure.logDetail.contains("never store credentials"))
            #expect(!failure.logDetail.contains("task-own-password"))
        }
        #expect(outbox.items.isEmpty)
        #expect(try scratch.allBytes().allSatisfy { !String(decoding: $0.bytes, as: UTF8.self).contains("task-own-password") })
    }

    @Test func credentialsInTheURLAreRefused() async throws {
        let scratch = OutboxScratch()
        defer { scratch.remove() }
        let server = try outboxServer(ScriptedAnswers([.status(200)]))
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
        struct Tokened: ServerTask {
            let server: ConveyServer
            var path: String { "feed" }
            var queryParameters: [String: String]? { ["token": "query-password-1"] }
        }
        await #expect(throws: ConveyError.credentialRefused(field: "query parameter token")) { try await outbox.enqueue(Tokened(server: server)) }

        let userInfoServer = try outboxServer(ScriptedAnswers([.status(200)]))
        userInfoServer.remote = Remote(name: "basic", string: "https://user:pass-word-9@api.example")
        await #expect(throws: ConveyError.credentialRefused(field: "URL user info")) {
            try await outbox.enqueue(PlaceOrder(server: userInfoServer, item: "tea"))
        }
    }

    @Test func theLimitsRefuseAnEnqueueBeyondThem() async throws {
        let scratch = OutboxScratch()
        defer { scratch.remove() }
        let server = try outboxServer(ScriptedAnswers([.status(200)]))
        let clock = ManualOutboxClock()
        let byCount = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(clock) { $0.maximumItems = 2 })
        try await byCount.enqueue(PlaceOrder(server: server, item: "1"))
        try await byCount.enqueue(PlaceOrder(server: server, item: "2"))
        await #expect(throws: ConveyError.outboxLimitReached(limit: "maximumItems", maximum: 2)) {
            try await byCount.enqueue(PlaceOrder(server: server, item: "3"))
        }
        #expect(byCount.items.count == 2)

        let bySize = try await Outbox(folder: scratch.root.appending(path: "b"), server: server, configuration: .testing(clock) { $0.maximumBodySize = 8 })
        await #expect(throws: ConveyError.outboxLimitReached(limit: "maximumBodySize", maximum: 8)) {
            try await bySize.enqueue(PlaceOrder(server: server, item: "a-long-item-name"))
        }
        let byBytes = try await Outbox(folder: scratch.root.appending(path: "c"), server: server, configuration: .testing(clock) { $0.maximumBytes = 600 })
        try await byBytes.enqueue(PlaceOrder(server: server, item: "1"))
        await #expect(throws: ConveyError.outboxLimitReached(limit: "maximumBytes", maximum: 600)) {
            try await byBytes.enqueue(PlaceOrder(server: server, item: "2"))
        }
    }

    @Test func theTasksOwnKeyIsKeptAndIDsSortInEnqueueOrder() async throws {
        let scratch = OutboxScratch()
        defer { scratch.remove() }
        let server = try outboxServer(ScriptedAnswers([.status(200)]))
        let outbox = try await Outbox(folder: scratch.folder, server: server, configuration: .testing(ManualOutboxClock()))
        let own = try await outbox.enqueue(PlaceOrder(server: server, item: "tea", extraHeaders: ["Idempotency-Key": "order-77"]))
        var ids = [own.id]
        for index in 0..<20 { ids.append(try await outbox.enqueue(PlaceOrder(server: server, item: "\(index)")).id) }
        #expect(own.idempotencyKey == "order-77")
        #expect(ids == ids.sorted())
        #expect(Set(outbox.items.map(\.idempotencyKey)).count == 21)
    }
}
