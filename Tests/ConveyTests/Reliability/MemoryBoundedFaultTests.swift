#if os(Linux)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Faults that could exhaust memory, run in a child `convey-harness` under a memory bound.
@Suite("Memory-bounded faults", .wire, .serialized)
struct MemoryBoundedFaultTests {
    private static let harness = HarnessProcess.executable
    private let transport = ProcessInfo.processInfo.environment["CONVEY_TRANSPORT"] ?? "curl"

    private func get(_ route: String, memoryLimit: Int, options: [String] = []) async throws -> BoundedRun {
        let executable = try #require(Self.harness, "convey-harness is not built: run scripts/test")
        return try await MemoryBoundedProcess.run(
            executable, ["get", try TestServers.fault(route).absoluteString, "--no-record", "--timeout", "20"] + options,
            memoryLimit: memoryLimit, environment: ["CONVEY_TRANSPORT": transport])
    }

    @Test func aSmallBodyStaysWellUnderTheBound() async throws {
        let run = try await get("/bytes/1048576", memoryLimit: 512 << 20)
        #expect(run.exited && run.status == 0)
        #expect(!run.killedForMemory)
        #expect(run.peakResidentBytes > 0 && run.peakResidentBytes < 512 << 20)
    }

    @Test func aProcessPastTheBoundIsKilled() async throws {
        // The harness keeps a 100 MiB body in memory: it cannot stay under 64 MiB.
        let run = try await get("/bytes/104857600", memoryLimit: 64 << 20)
        #expect(run.killedForMemory)
        #expect(!run.exited)
        #expect(run.peakResidentBytes > 64 << 20)
    }

    @Test func aGzipBombFailsWithinTheBound() async throws {
        // 1 GiB inflated (~1 MB on the wire): ten times the default body limit, twice the bound.
        // `--compressed`, as with curl: without it the curl transport hands the body over undecoded.
        // On URLSessionTransport FoundationNetworking inflates the body before Convey sees it: the
        // limit holds because the delegate drops what arrives after it and never waits for the cancel.
        let run = try await get("/gzip-bomb?size=1073741824", memoryLimit: 512 << 20, options: ["--compressed"])
        #expect(!run.killedForMemory)
        #expect(run.exited && run.status == 4)
        #expect(run.peakResidentBytes < 512 << 20)
    }
}
#endif
