#if os(Linux) || os(macOS)
import Foundation
import Testing

/// The harness against the local httpbin and nginx (see scripts/test).
@Suite("Harness on the wire", .wire)
struct HarnessWireTests {
    @Test func getAgainstHTTPBinSendsQueryAndHeaders() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try TestServers.httpbin().urlString(forPath: "")
        let run = try await HarnessProcess.run(["get", "/get", "--remote", httpbin, "-q", "x=y z", "-H", "X-Trace: 7", "--json"],
                                               records: records.url)

        #expect(run.status == 0, "\(run.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let response = try #require(object["response"] as? [String: Any])
        let body = try #require(response["body"] as? [String: Any])
        #expect(response["status"] as? Int == 200)
        #expect(body["args"] as? [String: String] == ["x": "y z"])
        #expect((body["headers"] as? [String: String])?["X-Trace"] == "7")
    }

    @Test func fullURLsChooseTheServerAndStatusesMapToExitCodes() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try TestServers.httpbin().urlString(forPath: "")
        let notFound = try await HarnessProcess.run(["get", httpbin + "/status/404"], records: records.url)
        let unavailable = try await HarnessProcess.run(["get", httpbin + "/status/503"], records: records.url)
        let form = try await HarnessProcess.run(["post", httpbin + "/post", "--form", "city=Zürich"], records: records.url)

        #expect(notFound.status == 2)
        #expect(notFound.stdout.hasPrefix("HTTP 404 Not Found\n"))
        #expect(unavailable.status == 3)
        #expect(form.status == 0)
        #expect(form.stdout.contains(#""city" : "Zürich""#))
    }

    @Test func replayAgainstHTTPBinResendsTheRecordedBody() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try TestServers.httpbin().urlString(forPath: "")
        _ = try await HarnessProcess.run(["patch", httpbin + "/patch", "--json-body", #"{"v": "1"}"#], records: records.url)

        let replay = try await HarnessProcess.run(["replay", "1"], records: records.url)

        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stdout.contains(#""v" : "1""#))
        #expect(replay.stderr.contains("Replaying record 1: PATCH \(httpbin)/patch"))
    }

    @Test func progressReportsAURLSessionTransfer() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let nginx = try TestServers.nginx().urlString(forPath: "")
        let run = try await HarnessProcess.run(["get", nginx + "/256k.json", "--progress", "-o", "/dev/null"], records: records.url)

        #expect(run.status == 0)
        #expect(run.stderr.contains("100%"))
    }

    @Test func demoAgainstHTTPBinBehaves() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try TestServers.httpbin().urlString(forPath: "")
        let run = try await HarnessProcess.run(["demo", "--remote", httpbin], records: records.url)

        #expect(run.status == 0, "\(run.stdout)")
        #expect(run.stdout.contains("against \(httpbin)"))
        #expect(run.stdout.contains("15 behaved as expected, 0 not available yet, 0 misbehaved."))
    }
}
#endif
