#if os(Linux) || os(macOS)
import Foundation
import Testing

/// Runs the benchmark with tiny counts so the command cannot rot; its figures are not checked.
@Suite("Benchmark smoke run", .wire)
struct BenchSmokeTests {
    @Test func everyWorkloadRunsAndReportsItsTable() async throws {
        let records = FileManager.default.temporaryDirectory.appending(path: "convey-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: records) }
        let run = try await HarnessProcess.run(["--smoke"], records: records, timeout: .seconds(120),
                                               executable: HarnessProcess.builtExecutable(named: "ConveyBench"))
        #expect(run.status == 0, "\(run.output)")
        for heading in ["## 1 KB GET", "## 256 KB JSON GET decoded into [Item]", "## POST of a 10 KB JSON body"] {
            #expect(run.stdout.contains(heading))
        }
        #expect(run.stdout.contains("| URLSession (raw) | 64 |"))
        #expect(run.stdout.contains("| Convey · URLSession | 16 |"))
        #expect(run.stdout.contains("Peak RSS: "))
    }
}
#endif
