#if os(Linux) || os(macOS)
import Foundation
import Testing

/// `get --stream` and `get --events` against httpbin and the event server, on the platform's
/// default transport whatever `CONVEY_TRANSPORT` says: URLSession on Linux refuses streams.
@Suite("Harness streaming on the wire", .wire)
struct HarnessStreamTests {
    /// An empty `CONVEY_TRANSPORT` names no transport: the platform's default applies.
    private static let defaultTransport = ["CONVEY_TRANSPORT": ""]

    @Test func streamPrintsEachLineOfTheBody() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try TestServers.httpbin().urlString(forPath: "")
        let run = try await HarnessProcess.run(["get", httpbin + "/stream/4", "--stream"], records: records.url,
                                               environment: Self.defaultTransport)

        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines.allSatisfy { $0.hasPrefix("{") && $0.contains("/stream/4") })
        #expect(run.stderr.contains("HTTP/1.1 200 OK"))
    }

    @Test func eventsPrintsEachEventUntilTheServerSays204() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let events = try TestServers.events().urlString(forPath: "")
        let run = try await HarnessProcess.run(["get", events + "/drop?after=5&total=3", "--events"], records: records.url,
                                               environment: Self.defaultTransport)

        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").map(String.init) == (1...3).map { #"[message id=\#($0)] {"n": \#($0), "pad": ""}"# })
    }

    @Test func streamAndEventsExcludeEachOther() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["get", "http://127.0.0.1:1/x", "--stream", "--events"], records: records.url)
        #expect(run.status == 1)
        #expect(run.stderr.contains("choose one of --stream and --events"))
    }
}
#endif
