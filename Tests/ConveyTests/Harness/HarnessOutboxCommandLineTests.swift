#if os(Linux) || os(macOS)
import Foundation
import Testing

/// `outbox` and `--outbox` command lines that need no server.
@Suite("Harness outbox command line")
struct HarnessOutboxCommandLineTests {
    @Test func outboxHasHelpAndTheMethodCommandsTakeOutbox() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let help = try await HarnessProcess.run(["outbox", "--help"], records: records.url)
        let post = try await HarnessProcess.run(["post", "--help"], records: records.url)
        #expect(help.status == 0 && help.stdout.hasPrefix("Usage: convey-harness outbox run|list|retry|drop DIR"))
        #expect(help.stdout.contains("--once") && help.stdout.contains("Exit codes:"))
        #expect(post.stdout.contains("--outbox DIR"))
    }

    @Test(arguments: [
        (["outbox"], 1, "outbox needs one of run, list, retry, drop"),
        (["outbox", "send", "x"], 1, "outbox needs one of run, list, retry, drop"),
        (["outbox", "retry", "DIR"], 1, "usage: outbox retry DIR ID"),
        (["outbox", "list", "/nonexistent/convey-outbox"], 5, "no outbox folder at /nonexistent/convey-outbox"),
        (["post", "/post", "-d", "x", "--outbox", "DIR"], 1, "--outbox needs a real server"),
    ] as [([String], Int32, String)])
    func badOutboxCommandLinesSayWhy(arguments: [String], status: Int32, message: String) async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(arguments, records: records.url)
        #expect(run.status == status, "\(run.output)")
        #expect(run.stderr.contains(message), "\(run.stderr)")
    }

    @Test func anEmptyFolderListsEmptyAndRunsToZero() async throws {
        let records = RecordsFolder()
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-outbox-\(UUID().uuidString)")
        defer {
            records.remove()
            try? FileManager.default.removeItem(at: folder)
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let list = try await HarnessProcess.run(["outbox", "list", folder.path()], records: records.url)
        let run = try await HarnessProcess.run(["outbox", "run", folder.path(), "--once"], records: records.url)
        let concurrency = try await HarnessProcess.run(["outbox", "run", folder.path(), "--concurrency", "0"], records: records.url)
        #expect(list.status == 0 && list.stdout == "(empty)\n")
        #expect(run.status == 0 && run.stdout.isEmpty)
        #expect(concurrency.status == 1 && concurrency.stderr.contains("--concurrency: '0'"))
    }
}
#endif
