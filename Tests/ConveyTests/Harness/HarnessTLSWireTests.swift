#if os(Linux)
import Foundation
import Testing

/// What the harness shows about a TLS connection, against the test CA's nginx servers.
@Suite("Harness over TLS", .wire)
struct HarnessTLSWireTests {
    private func run(_ arguments: [String]) async throws -> HarnessRun {
        let records = RecordsFolder()
        defer { records.remove() }
        return try await HarnessProcess.run(arguments + ["--transport", "curl"], records: records.url)
    }

    @Test func verboseShowsTheProtocolTheTLSVersionAndANewConnection() async throws {
        let url = try TLSTestServers.trusted("/hello.txt").absoluteString
        let run = try await run(["get", url, "--cacert", try TLSTestServers.file("ca.crt").path, "--verbose"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("* connection: HTTP/2 · TLSv1.3 · new connection\n"))
        #expect(!run.output.contains("verification"))
    }

    @Test func insecureJSONCarriesTheWarningAndTheUnverifiedConnection() async throws {
        let url = try TLSTestServers.url("CONVEY_TLS_EXPIRED_URL", "/hello.txt").absoluteString
        let run = try await run(["get", url, "-k", "--output-json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("Warning: --insecure"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let warnings = try #require(object["warnings"] as? [String])
        #expect(warnings.count == 1)
        #expect(warnings.first?.hasPrefix("Warning: --insecure: TLS certificates are not verified") == true)
        let connection = try #require((object["response"] as? [String: Any])?["connection"] as? [String: Any])
        #expect(connection["certificateVerified"] as? Bool == false)
        // The expired server speaks HTTP/1.1 only.
        #expect((connection["tlsVersion"] as? String)?.hasPrefix("TLSv1.") == true)
        #expect(connection["httpVersion"] as? String == "HTTP/1.1")
    }

    @Test func insecurePeopleOutputWarnsOnTheSummaryLine() async throws {
        let url = try TLSTestServers.url("CONVEY_TLS_EXPIRED_URL", "/hello.txt").absoluteString
        let run = try await run(["get", url, "--insecure"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").contains { $0.hasPrefix("200 OK · ") && $0.contains("⚠ TLS verification OFF") })
    }

    @Test func verifiedJSONHasNoWarnings() async throws {
        let url = try TLSTestServers.trusted("/hello.txt").absoluteString
        let run = try await run(["get", url, "--cacert", try TLSTestServers.file("ca.crt").path, "--output-json"])
        #expect(run.status == 0, "\(run.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect((object["warnings"] as? [String])?.isEmpty == true)
        let connection = try #require((object["response"] as? [String: Any])?["connection"] as? [String: Any])
        #expect(connection["certificateVerified"] as? Bool == true)
    }
}
#endif
