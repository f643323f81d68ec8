#if os(Linux) || os(macOS)
import Foundation
import Testing

/// Runs the events benchmark with tiny counts so the command cannot rot; its figures are not checked.
@Suite("Events benchmark smoke run", .wire)
struct StreamBenchSmokeTests {
    /// The transport of the loopback row: URLSession on Linux refuses streams.
    #if os(Linux)
    private static let loopbackTransport = "curl"
    #else
    private static let loopbackTransport = "URLSession"
    #endif

    @Test func everyWorkloadReadsAllItsEvents() async throws {
        let records = FileManager.default.temporaryDirectory.appending(path: "convey-stream-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: records) }
        let run = try await HarnessProcess.run(["--smoke"], records: records, timeout: .seconds(120),
                                               executable: HarnessProcess.builtExecutable(named: "StreamBench"))
        #expect(run.status == 0, "\(run.output)")
        for row in ["| in-process, paced at 10,000/s | 3000 |", "| in-process, as fast as read | 5000 |",
                    "| event-server.py over loopback, \(Self.loopbackTransport) | 2000 |"] {
            #expect(run.stdout.contains(row))
        }
    }
}
#endif
