#if os(Linux) || os(macOS)
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// `post … --outbox`, `outbox run|list|retry|drop` against scripts/idempotency-server.py, and
/// the outbox's durability when `outbox run` or an enqueue is killed with SIGKILL at each step.
@Suite("Harness outbox", .idempotencyServer)
struct HarnessOutboxTests {
    let records = RecordsFolder()
    let folder = FileManager.default.temporaryDirectory.appending(path: "convey-outbox-\(UUID().uuidString)", directoryHint: .isDirectory)

    func cleanUp() {
        records.remove()
        try? FileManager.default.removeItem(at: folder)
    }

    func harness(_ arguments: [String], killAt step: String? = nil) async throws -> HarnessRun {
        try await HarnessProcess.run(arguments, records: records.url, environment: step.map { ["CONVEY_OUTBOX_KILL_AT": $0] } ?? [:])
    }

    func enqueue(_ endpoint: String, data: String = "order", killAt step: String? = nil) async throws -> HarnessRun {
        try await harness(["post", endpoint, "-d", data, "--outbox", folder.path()], killAt: step)
    }

    /// `outbox list --json`: the items.
    func list() async throws -> [[String: Any]] {
        let run = try await harness(["outbox", "list", folder.path(), "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        return try #require(object["items"] as? [[String: Any]])
    }

    func key(of id: String) async throws -> String {
        try #require(try await list().first { $0["id"] as? String == id }?["key"] as? String)
    }

    @Test func enqueueListRunRetryAndDropWithTheirExitCodes() async throws {
        defer { cleanUp() }
        let good = try await enqueue(try IdempotencyServer.endpoint(fault: "503/1"))
        let refused = try await enqueue(try IdempotencyServer.endpoint(fault: "status-422/1"))
        #expect(good.status == 0 && refused.status == 0, "\(good.stderr)\(refused.stderr)")
        let goodID = good.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let refusedID = refused.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        let listed = try await list()
        #expect(listed.map { $0["id"] as? String } == [goodID, refusedID])
        #expect(listed.allSatisfy { $0["state"] as? String == "pending" && $0["method"] as? String == "POST" && $0["attempts"] as? Int == 0 })

        let run = try await harness(["outbox", "run", folder.path()])
        #expect(run.status == 2, "\(run.output)")
        #expect(run.stdout.contains("delivered \(goodID) POST"))
        #expect(run.stdout.contains("failed \(refusedID) POST"))
        let afterRun = try await list()
        #expect(afterRun.first { $0["id"] as? String == goodID }?["attempts"] as? Int == 2)
        #expect(afterRun.first { $0["id"] as? String == refusedID }?["status"] as? Int == 422)

        let retried = try await harness(["outbox", "retry", folder.path(), refusedID])
        #expect(retried.status == 0 && retried.stdout.contains("pending again"), "\(retried.output)")
        let second = try await harness(["outbox", "run", folder.path()])
        #expect(second.status == 0, "\(second.output)")
        #expect(second.stdout.contains("delivered \(refusedID)"))

        let dropped = try await harness(["outbox", "drop", folder.path(), goodID])
        #expect(dropped.status == 0, "\(dropped.output)")
        #expect(try await list().map { $0["id"] as? String } == [refusedID])
        let unknown = try await harness(["outbox", "drop", folder.path(), goodID])
        #expect(unknown.status == 5 && unknown.stderr.contains("No outbox item"))
    }

    @Test func onceTriesEachItemOnceAndExits4WhileSomeArePending() async throws {
        defer { cleanUp() }
        let endpoint = try IdempotencyServer.endpoint(fault: "503/1")
        let id = try await enqueue(endpoint).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let first = try await harness(["outbox", "run", folder.path(), "--once"])
        #expect(first.status == 4, "\(first.output)")
        let second = try await harness(["outbox", "run", folder.path(), "--once"])
        #expect(second.status == 0, "\(second.output)")
        let key = try await key(of: id)
        // The same key on both attempts, across two processes.
        #expect(try await IdempotencyServer.keys(on: endpoint) == [key, key])
    }

    @Test func credentialsComeFromRunAndNoneIsEverWrittenToTheFolder() async throws {
        defer { cleanUp() }
        let endpoint = try IdempotencyServer.endpoint()
        let token = "tok-\(UUID().uuidString)"
        let password = "pw-\(UUID().uuidString.prefix(8))"
        let cookie = "session=ck-\(UUID().uuidString.prefix(8))"
        let withToken = try await harness(["post", endpoint, "-d", "x", "-H", "Authorization: Bearer \(token)", "--outbox", folder.path()])
        let withCookie = try await harness(["post", endpoint, "-d", "x", "-H", "Cookie: \(cookie)", "--outbox", folder.path()])
        let url = try #require(URLComponents(string: endpoint))
        let withPassword = try await harness(["post", "http://user:\(password)@\(url.host ?? ""):\(url.port ?? 0)\(url.path)", "-d", "x", "--outbox", folder.path()])
        for refused in [withToken, withCookie, withPassword] {
            #expect(refused.status == 5, "\(refused.output)")
            #expect(refused.stderr.contains("never store credentials"))
        }
        let accepted = try await enqueue(endpoint)
        #expect(accepted.status == 0)
        let run = try await harness(["outbox", "run", folder.path(), "-H", "Authorization: Bearer \(token)", "-H", "Cookie: \(cookie)", "--echo", "full"])
        #expect(run.status == 0, "\(run.output)")
        #expect(!run.output.contains(token) && !run.output.contains(cookie))
        let files = FileManager.default.enumerator(atPath: folder.path())?.allObjects as? [String] ?? []
        #expect(!files.isEmpty)
        for name in files {
            let data = (try? Data(contentsOf: folder.appending(path: name))) ?? Data()
            let text = String(decoding: data, as: UTF8.self)
            #expect(!text.contains(token) && !text.contains(password) && !text.contains(cookie), "\(name)")
        }
    }

    @Test func twoProcessesOnOneFolderNeverSendAnItemTwice() async throws {
        defer { cleanUp() }
        let endpoint = try IdempotencyServer.endpoint()
        var ids: [String] = []
        for index in 0..<12 { ids.append(try await enqueue(endpoint, data: "item \(index)").stdout.trimmingCharacters(in: .whitespacesAndNewlines)) }
        async let first = harness(["outbox", "run", folder.path()])
        async let second = harness(["outbox", "run", folder.path()])
        let runs = try await [first, second]
        #expect(runs.allSatisfy { $0.status == 0 }, "\(runs.map(\.output))")
        // Every item delivered by exactly one of them, each sent once: no 409 (a key in flight twice), no replay.
        let delivered = runs.flatMap { $0.stdout.split(separator: "\n").filter { $0.hasPrefix("delivered") } }
        #expect(delivered.count == 12)
        let keys = try await IdempotencyServer.keys(on: endpoint)
        #expect(keys.count == 12 && Set(keys.compactMap { $0 }).count == 12)
        for key in Set(keys.compactMap { $0 }) {
            #expect(try await IdempotencyServer.stats(key: key) == ["seen": 1, "processed": 1, "replays": 0, "conflicts": 0])
        }
    }

    // MARK: - SIGKILL at each step

    @Test func killedBeforeTheRenameAnEnqueueLeavesNothing() async throws {
        defer { cleanUp() }
        let killed = try await enqueue(try IdempotencyServer.endpoint(), killAt: "enqueue-written")
        #expect(!killed.exited && killed.stdout.isEmpty)
        #expect(try await list().isEmpty)
        let run = try await harness(["outbox", "run", folder.path()])
        #expect(run.status == 0 && run.stdout.isEmpty, "\(run.output)")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path()).filter { $0 != ".lock" }
        #expect(left.isEmpty, "the killed writer's temporary file is removed: \(left)")
    }

    @Test func killedAfterTheRenameAnEnqueueLeavesTheWholeItem() async throws {
        defer { cleanUp() }
        let endpoint = try IdempotencyServer.endpoint()
        let killed = try await enqueue(endpoint, data: "whole item", killAt: "enqueue-renamed")
        #expect(!killed.exited)
        let items = try await list()
        #expect(items.count == 1 && items.first?["state"] as? String == "pending")
        let run = try await harness(["outbox", "run", folder.path()])
        #expect(run.status == 0, "\(run.output)")
        let key = try #require(items.first?["key"] as? String)
        #expect(try await IdempotencyServer.stats(key: key)["processed"] == 1)
    }

    /// Enqueues one item at `endpoint`, kills `outbox run` at `step` (or, with `killWhen`, once
    /// the server's counts for the item's key satisfy it), runs again, and returns the item's key.
    func killRunThenRestart(_ endpoint: String, step: String? = nil, killWhen: (([String: Int]) -> Bool)? = nil) async throws -> (key: String, restart: HarnessRun) {
        let id = try await enqueue(endpoint).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let key = try await key(of: id)
        if let killWhen {
            let child = try StartedHarness(["outbox", "run", folder.path()], records: records.url)
            try await IdempotencyServer.waitFor(key: key, killWhen)
            child.kill()
            let killed = await child.finish()
            #expect(!killed.exited, "\(killed.output)")
            try await IdempotencyServer.release(key: key)
        } else {
            let killed = try await harness(["outbox", "run", folder.path()], killAt: step)
            #expect(!killed.exited, "\(killed.output)")
        }
        #expect(try await list().first?["state"] as? String != nil)
        let restart = try await harness(["outbox", "run", folder.path()])
        #expect(restart.status == 0, "\(restart.output)")
        #expect(try await list().first?["state"] as? String == "delivered")
        return (key, restart)
    }

    @Test func killedMidSendTheItemIsSentAgainAndProcessedOnce() async throws {
        defer { cleanUp() }
        let result = try await killRunThenRestart(try IdempotencyServer.endpoint(fault: "stall-before-act/1")) { $0["seen", default: 0] >= 1 }
        #expect(try await IdempotencyServer.stats(key: result.key) == ["seen": 2, "processed": 1, "replays": 0, "conflicts": 0])
    }

    @Test func killedAfterTheServerActedButBeforeTheAnswerTheKeyKeepsItOnce() async throws {
        defer { cleanUp() }
        let result = try await killRunThenRestart(try IdempotencyServer.endpoint(fault: "stall-after-act/1")) { $0["processed", default: 0] >= 1 }
        #expect(try await IdempotencyServer.stats(key: result.key) == ["seen": 2, "processed": 1, "replays": 1, "conflicts": 0])
        #expect(try await list().first?["attempts"] as? Int == 2)
    }

    @Test func killedAsAnAttemptStartsOrItsAnswerArrivesTheItemIsDeliveredOnce() async throws {
        for step in ["attempt-started", "response-received"] {
            defer { try? FileManager.default.removeItem(at: folder) }
            let result = try await killRunThenRestart(try IdempotencyServer.endpoint(), step: step)
            let stats = try await IdempotencyServer.stats(key: result.key)
            #expect(stats["processed"] == 1, "\(step)")
            #expect(stats["seen"] == (step == "attempt-started" ? 1 : 2), "\(step)")
        }
        cleanUp()
    }

    @Test func killedWhileMarkingItDeliveredTheItemStaysDelivered() async throws {
        defer { cleanUp() }
        let result = try await killRunThenRestart(try IdempotencyServer.endpoint(), step: "delivered-written")
        // The delivered state was on disk: the restart sends nothing.
        #expect(result.restart.stdout.isEmpty, "\(result.restart.output)")
        #expect(try await IdempotencyServer.stats(key: result.key) == ["seen": 1, "processed": 1, "replays": 0, "conflicts": 0])
    }
}

/// A harness process started in the background, for a test to kill at a moment it chooses.
final class StartedHarness: @unchecked Sendable {
    private let process = Process()
    private let output: URL
    private let exited: AsyncStream<Void>

    init(_ arguments: [String], records: URL) throws {
        let executable = try #require(HarnessProcess.executable, "the executable is not built: run `swift build`")
        output = FileManager.default.temporaryDirectory.appending(path: "convey-started-\(UUID().uuidString)")
        try Data().write(to: output)
        process.executableURL = executable
        process.arguments = arguments
        var variables = ProcessInfo.processInfo.environment
        variables["CONVEY_HARNESS_RECORDS"] = records.path(percentEncoded: false)
        process.environment = variables
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        exited = stream
        process.terminationHandler = { _ in continuation.finish() }
        try process.run()
    }

    func kill() {
        #if canImport(Glibc)
        if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
        #else
        if process.isRunning { _ = Darwin.kill(process.processIdentifier, SIGKILL) }
        #endif
    }

    func finish() async -> HarnessRun {
        for await _ in exited {}
        process.waitUntilExit()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: output)
        return HarnessRun(status: process.terminationStatus, stdout: text, stderr: "", exited: process.terminationReason == .exit)
    }
}
#endif
