import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct ProfileTask: ServerTask {
    let server: ConveyServer
    var path: String { "profile" }
    var queryParameters: [String: String]? { ["token": "query-secret", "page": "2"] }
    var headers: Headers {
        get async throws { ["Authorization": "Bearer header-secret", "X-Trace": "abc"] }
    }
}

private struct TaggedTask: ServerTask {
    let server: ConveyServer
    var path: String { "tagged" }
    var headers: Headers {
        get async throws {
            var fields: Headers = ["X-Tag": "first", "Authorization": "Bearer header-secret"]
            fields.add(Header(name: "X-Tag", value: "second"))
            return fields
        }
    }
}

private struct SignInTask: JSONUploadingTask {
    struct Credentials: Encodable, Sendable { let user: String, password: String }
    let server: ConveyServer
    var path: String { "sign-in" }
    var method: HTTPMethod { .post }
    var uploadPayload: Credentials? { Credentials(user: "ada", password: "body-secret") }
}

private struct QuietTask: NonEchoingTask, ServerTask {
    let server: ConveyServer
    var path: String { "quiet" }
}

private struct FlakyTask: ServerTask {
    let server: ConveyServer
    var path: String { "flaky" }
    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { count < 2 ? 0 : nil }
}

/// A fresh folder under the temporary directory, removed by `remove()`.
private struct ScratchFolder {
    let url = FileManager.default.temporaryDirectory.appending(path: "convey-recorder-\(UUID().uuidString)")

    func remove() { try? FileManager.default.removeItem(at: url) }

    var fileNames: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path(percentEncoded: false))) ?? []).sorted()
    }
}

@Suite("Task recording")
@ConveyActor
struct TaskRecorderTests {
    @Test func aRecordHoldsTheExchangeWithCredentialsMasked() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let recorder = TaskRecorder(folder: folder.url)
        let server = try stubServer(.answering(status: 200, headers: ["Content-Type": "application/json", "Set-Cookie": "id=cookie-secret"],
                                               body: #"{"name":"Ada"}"#)) { $0.recorder = recorder }

        try await ProfileTask(server: server).send()
        let records = await recorder.records()

        let record = try #require(records.first)
        #expect(records.count == 1)
        #expect(record.taskName == "ProfileTask")
        #expect(record.method == "GET")
        #expect(record.url == "https://stub.example/profile?page=2&token=\(Redaction.mask)")
        #expect(Headers(record.requestFields)["Authorization"] == Redaction.mask)
        #expect(Headers(record.requestFields)["X-Trace"] == "abc")
        #expect(Headers(record.responseHeaders)["Set-Cookie"] == Redaction.mask)
        #expect(record.statusCode == 200)
        #expect(record.outcome == .succeeded)
        #expect(record.attempt == 1)
        #expect(record.responseBodySize == 14)
        #expect(record.responseBody == nil)
        #expect(record.error == nil)
        #expect(record.redactedParts == ["URL query", "header Authorization"])
        let onDisk = try String(contentsOf: folder.url.appending(path: record.id + ".json"), encoding: .utf8)
        #expect(!onDisk.contains("secret"))
    }

    @Test func aRecordKeepsTheRequestFieldsInTheOrderSentWithRepeatsAndOneViewOfThem() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let recorder = TaskRecorder(folder: folder.url)
        let server = try stubServer(.answering(status: 200)) { $0.recorder = recorder }

        try await TaggedTask(server: server).send()

        let record = try #require(await recorder.records().first)
        let taskFields = record.requestFields.filter { ["X-Tag", "Authorization"].contains($0.name) }
        #expect(taskFields == [Header(name: "X-Tag", value: "first"), Header(name: "X-Tag", value: "second"),
                               Header(name: "Authorization", value: Redaction.mask)])
        let onDisk = try Data(contentsOf: folder.url.appending(path: record.id + ".json"))
        let json = try #require(try JSONSerialization.jsonObject(with: onDisk) as? [String: Any])
        #expect(json["requestHeaders"] == nil, "the fields are written once, in order")
        #expect((json["requestFields"] as? [[String: String]])?.count == record.requestFields.count)
    }

    @Test func aRecordWrittenBeforeTheFieldOrderWasKeptListsItsFieldsSortedByName() throws {
        let earlier = """
            {"formatVersion": 2, "id": "20261120T100000.000Z-0001", "taskName": "ProfileTask", "serverName": "api",
             "startedAt": "2026-11-20T10:00:00Z", "duration": 0.5, "attempt": 1, "outcome": "succeeded", "method": "GET",
             "url": "https://api.example/profile", "requestHeaders": {"X-Trace": "abc", "accept": "*/*", "Authorization": "‹redacted›"},
             "requestBodySize": 0, "statusCode": 200, "responseHeaders": [], "responseBodySize": 0}
            """
        let record = try RecordedTask.makeJSONDecoder().decode(RecordedTask.self, from: Data(earlier.utf8))
        #expect(record.requestFields == [Header(name: "accept", value: "*/*"), Header(name: "Authorization", value: "‹redacted›"),
                                         Header(name: "X-Trace", value: "abc")])
        #expect(record.redactedParts == ["header Authorization"])
        let rewritten = try RecordedTask.makeJSONDecoder().decode(RecordedTask.self, from: RecordedTask.makeJSONEncoder().encode(record))
        #expect(rewritten == record)
    }

    @Test func bodiesAreKeptOnlyWhenAskedForAndCutAtTheLimit() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let recorder = TaskRecorder(folder: folder.url, bodyLimit: 60)
        let long = String(repeating: "x", count: 100)
        let server = try stubServer(.answering(headers: ["Content-Type": "text/plain"], body: long)) { $0.recorder = recorder }

        try await SignInTask(server: server).send()
        let record = try #require(await recorder.records().first)

        let requestBody = String(decoding: try #require(record.requestBody), as: UTF8.self)
        #expect(requestBody.contains("\"password\" : \"\(Redaction.mask)\""))
        #expect(requestBody.contains("\"user\" : \"ada\""))
        #expect(record.requestBodyIsTruncated == false)
        #expect(record.responseBody == Data(String(repeating: "x", count: 60).utf8))
        #expect(record.responseBodyIsTruncated)
        #expect(record.responseBodyRecord == RecordedBody(text: String(repeating: "x", count: 60), base64: nil, truncated: true))
        #expect(record.responseBodySize == 100)
        #expect(record.redactedParts == ["request body"])
    }

    @Test func binaryBodiesAreKeptAsBase64() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let recorder = TaskRecorder(folder: folder.url, bodyLimit: 1000)
        let bytes = Data([0x00, 0xFF, 0x10, 0x80])
        let server = try stubServer(StubTransport { request in
            TransportResponse(url: request.request.url, body: bytes)
        }) { $0.recorder = recorder }

        try await ProfileTask(server: server).send()

        let record = try #require(await recorder.records().first)
        #expect(record.responseBodyRecord?.text == nil)
        #expect(record.responseBodyRecord?.base64 == bytes.base64EncodedString())
        #expect(record.responseBody == bytes)
    }

    @Test func failuresAreRecordedWithoutTheirBodiesOrSecrets() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let recorder = TaskRecorder(folder: folder.url)
        let server = try stubServer(.answering(status: 401, body: "token=body-secret")) { $0.recorder = recorder }

        await #expect(throws: HTTPError.self) { try await ProfileTask(server: server).send() }
        server.transport = StubTransport { _ in throw URLError(.cannotConnectToHost) }
        await #expect(throws: ConveyError.self) { try await ProfileTask(server: server).send() }

        let records = await recorder.records()
        #expect(records.map(\.outcome) == [.failed, .httpError])
        #expect(records.last?.error == "HTTP 401 Unauthorized")
        #expect(records.first?.error?.hasPrefix("Could not connect: ") == true)
        #expect(records.first?.error?.hasSuffix("(code \(URLError.Code.cannotConnectToHost.rawValue))") == true)
        #expect(records.first?.statusCode == nil)
        let onDisk = folder.fileNames.compactMap { try? String(contentsOf: folder.url.appending(path: $0), encoding: .utf8) }.joined()
        #expect(!onDisk.contains("secret"))
    }

    @Test func everyAttemptOfARetriedTaskIsRecorded() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let recorder = TaskRecorder(folder: folder.url)
        let calls = EventLog()
        let server = try stubServer(StubTransport { request in
            calls.add("call")
            return TransportResponse(url: request.request.url, statusCode: calls.events.count == 1 ? 503 : 200)
        }) { $0.recorder = recorder }

        try await FlakyTask(server: server).send()

        let records = await recorder.records()
        #expect(records.map(\.attempt) == [2, 1])
        #expect(records.map(\.statusCode) == [200, 503])
    }

    @Test func nothingIsRecordedWithoutRecorderOrWithoutTheRecordedStyle() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let recorder = TaskRecorder(folder: folder.url)
        let unrecorded = try stubServer(.answering())
        let quiet = try stubServer(.answering()) { $0.recorder = recorder }
        let consoleOnly = try stubServer(.answering()) {
            $0.recorder = recorder
            $0.defaultEchoStyle = .consoleMinimum
        }

        try await ProfileTask(server: unrecorded).send()
        try await QuietTask(server: quiet).send()
        try await ProfileTask(server: consoleOnly).send()
        await recorder.flush()

        #expect(unrecorded.configuration.recorder == nil)
        #expect(!FileManager.default.fileExists(atPath: folder.url.path(percentEncoded: false)))
    }

    @Test func retentionKeepsTheNewestRecordsUpToTheCount() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let recorder = TaskRecorder(folder: folder.url, maxCount: 3)
        let server = try stubServer(.answering()) { $0.recorder = recorder }

        for _ in 0..<7 { try await ProfileTask(server: server).send() }
        let records = await recorder.records()

        #expect(records.count == 3)
        #expect(folder.fileNames.count == 3)
        #expect(records.map(\.id) == records.map(\.id).sorted(by: >))
    }

    @Test func retentionRemovesRecordsOlderThanTheMaximumAge() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let clock = Clock(Date(timeIntervalSince1970: 1_700_000_000))
        let recorder = TaskRecorder(folder: folder.url, maxCount: 5, maxAge: .seconds(3600), bodyLimit: 0, now: { clock.now })
        let server = try stubServer(.answering()) { $0.recorder = recorder }

        try await ProfileTask(server: server).send()
        try await ProfileTask(server: server).send()
        clock.now = clock.now.addingTimeInterval(7200)
        try await ProfileTask(server: server).send()
        let records = await recorder.records()

        #expect(records.count == 1)
        #expect(records.first?.startedAt ?? .distantPast > Date(timeIntervalSince1970: 1_700_003_600))
    }

    @Test func aLargeFolderIsPrunedEveryTenthOfTheCount() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let recorder = TaskRecorder(folder: folder.url, maxCount: 20)
        let server = try stubServer(.answering()) { $0.recorder = recorder }

        for _ in 0..<22 { try await ProfileTask(server: server).send() }
        await recorder.flush()
        let betweenPrunes = folder.fileNames.count
        try await ProfileTask(server: server).send()
        await recorder.flush()

        #expect(betweenPrunes == 21)
        #expect(folder.fileNames.count == 20)
    }

    @Test func aCorruptRecordIsSkippedAndReported() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let recorder = TaskRecorder(folder: folder.url)
        let server = try stubServer(.answering()) { $0.recorder = recorder }
        try await ProfileTask(server: server).send()
        await recorder.flush()
        let corruptID = "20240101T000000000Z-deadbeef"
        try Data("{ not json".utf8).write(to: folder.url.appending(path: corruptID + ".json"))
        try Data("{}".utf8).write(to: folder.url.appending(path: "notes.json"))

        let records = await recorder.records()

        #expect(records.count == 1)
        #expect(await recorder.unreadableRecordIDs() == [corruptID])
        #expect(await recorder.record(id: corruptID) == nil)
        #expect(await recorder.record(id: records[0].id) == records[0])
    }

    @Test func concurrentWritersSharingAFolderLoseNothing() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let first = TaskRecorder(folder: folder.url)
        let second = TaskRecorder(folder: folder.url)

        try await sendConcurrently(60, recorders: [first, second])
        let records = await first.records()

        #expect(records.count == 60)
        #expect(Set(records.map(\.id)).count == 60)
        #expect(folder.fileNames.allSatisfy { !$0.hasPrefix(".") })
    }

    @Test func concurrentWritersPruneTheSharedFolderToTheCount() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let first = TaskRecorder(folder: folder.url, maxCount: 10)
        let second = TaskRecorder(folder: folder.url, maxCount: 10)

        try await sendConcurrently(40, recorders: [first, second])

        #expect(await first.records().count == 10)
        #expect(await first.unreadableRecordIDs().isEmpty)
    }

    @Test func clearRemovesEveryRecordAndNothingElse() async throws {
        let folder = ScratchFolder()
        defer { folder.remove() }
        let recorder = TaskRecorder(folder: folder.url)
        let server = try stubServer(.answering()) { $0.recorder = recorder }
        try await ProfileTask(server: server).send()
        try await ProfileTask(server: server).send()
        await recorder.flush()
        try Data("keep".utf8).write(to: folder.url.appending(path: "README.txt"))

        let removed = await recorder.clear()

        #expect(removed == 2)
        #expect(await recorder.records().isEmpty)
        #expect(folder.fileNames == ["README.txt"])
    }

    @Test func anUnwritableFolderIsReportedNotFatal() async throws {
        let file = ScratchFolder()
        defer { file.remove() }
        try Data("a file, not a folder".utf8).write(to: file.url)
        let recorder = TaskRecorder(folder: file.url)
        let server = try stubServer(.answering()) { $0.recorder = recorder }

        try await ProfileTask(server: server).send()
        await recorder.flush()

        #expect(recorder.lastWriteFailure != nil)
        #expect(await recorder.records().isEmpty)
    }

    /// Sends `count` tasks at once, spread over one server per recorder, and waits for every write.
    private func sendConcurrently(_ count: Int, recorders: [TaskRecorder]) async throws {
        let servers = try recorders.map { recorder in try stubServer(.answering()) { $0.recorder = recorder } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                let server = servers[index % servers.count]
                group.addTask { try await ProfileTask(server: server).send() }
            }
            try await group.waitForAll()
        }
        for recorder in recorders { await recorder.flush() }
    }

    @Test func recordIDsSortByTimeAndAreRecognised() throws {
        let early = Date(timeIntervalSince1970: 1_700_000_000.123)
        let earlyID = RecordFolder.newID(at: early)
        let lateID = RecordFolder.newID(at: early.addingTimeInterval(0.001))

        #expect(earlyID.hasPrefix("20231114T221320123Z-"))
        #expect(RecordFolder.newID(at: Date(timeIntervalSince1970: 951_782_400)).hasPrefix("20000229T000000000Z-"))
        #expect(RecordFolder.newID(at: Date(timeIntervalSince1970: 1_709_251_199.999)).hasPrefix("20240229T235959999Z-"))
        #expect(RecordFolder.newID(at: Date(timeIntervalSince1970: 0)).hasPrefix("19700101T000000000Z-"))
        #expect(earlyID < lateID)
        #expect(RecordFolder.isRecordID(earlyID))
        #expect(!RecordFolder.isRecordID("notes"))
        #expect(!RecordFolder.isRecordID("2023111xT221320123Z-deadbeef"))
        #expect(!RecordFolder.isRecordID("20231114T221320123Z-DEADBEEF"))
    }
}

/// A settable clock for retention tests.
private final class Clock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date) { current = start }

    var now: Date {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }
}
