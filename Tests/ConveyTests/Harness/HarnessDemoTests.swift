#if os(Linux) || os(macOS)
import Foundation
import Testing

@Suite("Harness demo")
struct HarnessDemoTests {
    static let titles = [
        "GET with query parameters", "Typed JSON decode", "Decoding failure", "JSON upload", "Form upload",
        "Multipart upload", "HTTP error status", "ETag revalidation (304)", "Retry after 503", "Attempt timeout",
        "Total timeout", "Cancellation", "Cancel by session tag", "-fail-all-requests", "Task recording",
        "HAR: record, export, replay offline",
    ]

    @Test func demoRunsEveryStepWithoutANetworkAndCleansUp() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let temporary = records.url.appending(path: "tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let run = try await HarnessProcess.run(["demo"], records: records.url,
                                               environment: ["TMPDIR": temporary.path(percentEncoded: false), "CONVEY_HARNESS_RECORDS": ""])

        #expect(run.status == 0, "\(run.output)")
        for (index, title) in Self.titles.enumerated() {
            #expect(run.stdout.contains("━━ \(index + 1)/16  \(title) "))
        }
        #expect(run.stdout.contains("against the embedded in-process server (no network)"))
        #expect(run.stdout.contains("│ [Convey] ▶ GET http://embedded.invalid/get?limit=10&q=swift%20%26%20http%20%3D%20fun%3F"))
        #expect(run.stdout.contains(#""password" : "‹redacted›""#))
        #expect(run.stdout.contains("│ retryInterval         HTTPError 503, count 1 → retry in 0.2 s"))
        #expect(run.stdout.contains("│ didFinish             200 · payload EchoedRequest · attempt 1"))
        #expect(run.stdout.contains("✓ the child process exited with 4"))
        #expect(run.stdout.contains("then 304 Not Modified answered with the stored"))
        #expect(run.stdout.contains("✓ cancel(sessionWithTag:) cancelled 2 runs"))
        #expect(run.stdout.contains("✓ ConveyError.totalTimedOut"))
        #expect(run.stdout.contains("③ replayed offline: both tasks answered from session.har by a server whose transport cannot send"))
        #expect(run.stdout.contains("16 behaved as expected, 0 not available yet, 0 misbehaved."))
        #expect(!run.stdout.contains("misbehaved:"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path(percentEncoded: false)).isEmpty,
                "the demo's temporary records folder is removed")
    }

    @Test func chosenStepsRunAloneAndRecordIntoANamedFolder() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let list = try await HarnessProcess.run(["demo", "--list"], records: records.url)
        let run = try await HarnessProcess.run(["demo", "4", "9", "--records", records.url.path(percentEncoded: false)], records: records.url)
        let recorded = try await HarnessProcess.run(["recorded", "list"], records: records.url)

        #expect(list.stdout.split(separator: "\n").count == 16)
        #expect(list.stdout.contains(" 9  Retry after 503"))
        #expect(run.status == 0)
        #expect(run.stdout.contains("2 steps: 2 behaved as expected"))
        #expect(!run.stdout.contains("Typed JSON decode"))
        #expect(recorded.stdout.split(separator: "\n").count == 3, "one JSON upload and two attempts of the retried task")
    }
}
#endif
