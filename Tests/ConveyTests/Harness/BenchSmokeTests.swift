#if os(Linux) || os(macOS)
import Foundation
import Testing

/// Runs the benchmark with tiny counts so the command cannot rot; its figures are not checked.
@Suite("Benchmark smoke run", .wire)
struct BenchSmokeTests {
    @Test func everyWorkloadRunsAndReportsItsTable() async throws {
        let scratch = FileManager.default.temporaryDirectory.appending(path: "convey-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        // The C loop, compiled as scripts/bench does; without a C compiler the benchmark runs without it.
        let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let ceilingPath = scratch.appending(path: "curl-ceiling").path(percentEncoded: false)
        let build = try await HarnessProcess.run([ceilingPath], records: scratch.appending(path: "build-records"), timeout: .seconds(60),
                                                 executable: packageRoot.appending(path: "scripts/build-curl-ceiling"))
        let ceilingBuilt = build.status == 0

        let run = try await HarnessProcess.run(["--smoke"], records: scratch.appending(path: "records"),
                                               environment: ["CONVEY_CURL_CEILING": ceilingBuilt ? ceilingPath : ""],
                                               timeout: .seconds(120), executable: HarnessProcess.builtExecutable(named: "ConveyBench"))
        #expect(run.status == 0, "\(run.output)")
        for heading in ["## 1 KB GET", "## 256 KB JSON GET decoded into [Item]", "## POST of a 10 KB JSON body"] {
            #expect(run.stdout.contains(heading))
        }
        #expect(run.stdout.contains("| URLSession (raw) | 64 |"))
        #expect(run.stdout.contains("| Convey · URLSession | 16 |"))
        #if os(Linux)
        #expect(run.stdout.contains("| Convey · curl, on @ConveyActor | 64 |"))
        // HTTPS from the test CA's nginx: each workload's table, through Convey and CurlTransport.
        for title in ["1 KB GET over HTTPS, HTTP/2", "1 KB GET over HTTPS, HTTP/1.1", "1 KB GET over HTTPS, HTTP/1.1, a new connection and TLS handshake each"] {
            let section = try #require(run.stdout.components(separatedBy: "\n## ").first { $0.hasPrefix(title + ":") }, "\(run.output)")
            #expect(section.contains("| Convey · curl | 16 |"))
            #expect(section.contains("| CurlTransport (raw) | 16 |"))
            if ceilingBuilt { #expect(section.contains("| client | in flight | throughput × C loop | CPU/req × C loop |")) }
        }
        #endif
        if ceilingBuilt {
            #expect(run.stdout.contains("| libcurl multi, C loop (ceiling) | 16 |"), "\(run.output)")
            #expect(run.stdout.contains("| client | in flight | throughput × C loop | CPU/req × C loop |"), "\(run.output)")
        } else {
            #expect(run.stdout.contains("Note: the ceiling is skipped"), "\(build.output)\n\(run.output)")
        }
        // The blocking hook: the GETs alone and beside the hook, with their timeouts and ratio.
        let blocking = try #require(run.stdout.components(separatedBy: "\n## ").first {
            $0.hasPrefix("64 × 1 KB GET with a 100 ms idle timeout, beside a hook that blocks 150 ms every 0.5 s:")
        }, "\(run.output)")
        #expect(blocking.contains("| GETs | req/s | timeouts (of 64 per batch) | slowest GET, ms | throughput × alone |"))
        #expect(blocking.contains("| alone | "))
        #expect(blocking.contains("| beside the blocking hook | "))
        #expect(run.stdout.contains("Peak RSS: "))
    }

    #if os(Linux)
    @Test func loopCountsRunSideBySideWithTheirRatios() async throws {
        let scratch = FileManager.default.temporaryDirectory.appending(path: "convey-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try await HarnessProcess.run(["--smoke", "--workloads", "small", "--loops", "1,2", "--only", "loops:"],
                                               records: scratch.appending(path: "records"), environment: ["CONVEY_CURL_CEILING": ""],
                                               timeout: .seconds(120), executable: HarnessProcess.builtExecutable(named: "ConveyBench"))
        #expect(run.status == 0, "\(run.output)")
        for client in ["Convey · curl, loops: 1", "Convey · curl, loops: 2", "CurlTransport (raw), loops: 2"] {
            #expect(run.stdout.contains("| \(client) | 64 |"), "\(run.output)")
        }
        #expect(!run.stdout.contains("| URLSession (raw) | 64 |"), "--only leaves the other clients out")
        #expect(run.stdout.contains("| client | in flight | loops | throughput × 1 loop | CPU/req × 1 loop |"), "\(run.output)")
        #expect(run.stdout.contains("| Convey · curl, loops: 2 | 16 | 2 | "), "\(run.output)")
    }
    #endif
}
#endif
