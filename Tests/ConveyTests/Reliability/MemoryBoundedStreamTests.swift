#if os(Linux)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Endless streams read by a child `convey-harness` under a memory bound, on each transport: curl
/// holds them within its buffer; URLSession on Linux, which cannot, refuses them at once.
@Suite("Memory-bounded streams", .wire, .serialized)
struct MemoryBoundedStreamTests {
    /// Far above what a stream on curl takes (its buffer, curl's, the harness), far below a backlog.
    private static let memoryLimit = 256 << 20

    private static func route(_ pathAndQuery: String) throws -> String {
        try #require(TestServers.eventsURL, "CONVEY_EVENTS_URL is not set: run the suite with scripts/test").absoluteString + pathAndQuery
    }

    @Test(arguments: [("/endless?size=1024", "--stream"), ("/endless?size=1024", "--events"), ("/comments", "--events")])
    func anEndlessStreamOnCurlStaysWithinTheBound(_ route: String, _ mode: String) async throws {
        let executable = try #require(HarnessProcess.executable, "convey-harness is not built: run scripts/test")
        // The harness reads until it is stopped: the watcher ends it after a few seconds.
        let run = try await MemoryBoundedProcess.run(
            executable, ["get", try Self.route(route), mode, "--no-record"], memoryLimit: Self.memoryLimit,
            timeout: .seconds(6), environment: ["CONVEY_TRANSPORT": "curl"])
        #expect(!run.killedForMemory, "peak \(run.peakResidentBytes) bytes")
        #expect(run.peakResidentBytes > 0 && run.peakResidentBytes < Self.memoryLimit)
    }

    @Test(arguments: ["--stream", "--events"])
    func aStreamOnURLSessionIsRefusedAtOnce(_ mode: String) async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        // A short stream: were it not refused, it would end by itself instead of growing without bound.
        let run = try await HarnessProcess.run(["get", try Self.route("/events?count=3"), mode], records: records.url,
                                               environment: ["CONVEY_TRANSPORT": "urlSession"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("does not stream"), "\(run.stderr)")
        #expect(run.stderr.contains("CurlTransport"))
    }
}
#endif
