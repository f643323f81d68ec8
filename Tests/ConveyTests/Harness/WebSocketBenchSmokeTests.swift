#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
import Testing

/// Runs the WebSocket benchmark with tiny counts so the command cannot rot; its figures are not checked.
@Suite("WebSocket benchmark smoke run", .wire)
struct WebSocketBenchSmokeTests {
    @Test func everyWorkloadEchoesAllItsMessages() async throws {
        let records = FileManager.default.temporaryDirectory.appending(path: "convey-websocket-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: records) }
        let run = try await HarnessProcess.run(["--smoke"], records: records, timeout: .seconds(120),
                                               executable: HarnessProcess.builtExecutable(named: "WebSocketBench"))
        #expect(run.status == 0, "\(run.output)")
        for row in ["| Convey (curl) | 1 in flight | 200 |", "| Convey (curl) | 64 in flight | 2000 |", "| Convey (curl) | 64 in flight, memory | 5000 |"] {
            #expect(run.stdout.contains(row))
        }
    }
}
#endif
