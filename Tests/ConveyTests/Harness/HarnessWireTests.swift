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
        let run = try await HarnessProcess.run(["get", "/get", "--remote", httpbin, "--url-query", "x=y z", "-H", "X-Trace: 7", "--output-json"],
                                               records: records.url)

        #expect(run.status == 0, "\(run.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let response = try #require(object["response"] as? [String: Any])
        let body = try #require(response["body"] as? [String: Any])
        #expect(response["status"] as? Int == 200)
        #expect(body["args"] as? [String: String] == ["x": "y z"])
        #expect((body["headers"] as? [String: String])?["X-Trace"] == "7")
    }

    /// The echoed request headers and the `--verbose` transport line of `get /headers`.
    private func headersRun(_ extra: [String], environment: [String: String]) async throws -> (transportLine: String?, headers: [String: String]) {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try TestServers.httpbin().urlString(forPath: "")
        let run = try await HarnessProcess.run(["get", "/headers", "--remote", httpbin, "--verbose"] + extra,
                                               records: records.url, environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let transportLine = run.stderr.split(separator: "\n").first { $0.hasPrefix("* transport: ") }.map(String.init)
        let json = try #require(run.stdout.range(of: "\n{")).lowerBound
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout[json...].utf8)) as? [String: Any])
        return (transportLine, try #require(object["headers"] as? [String: String]))
    }

    @Test func realServersGetThePlatformsDefaultTransport() async throws {
        let run = try await headersRun([], environment: ["CONVEY_TRANSPORT": ""])
        #if os(Linux)
        #expect(run.transportLine == "* transport: curl")
        // URLSession on Linux adds `Accept-Language: en`; the curl transport sends no such header.
        #expect(run.headers["Accept-Language"] == nil)
        #else
        #expect(run.transportLine == "* transport: urlsession")
        #endif
        #expect(run.headers["User-Agent"]?.contains("Convey/") == true)
    }

    @Test func theEnvironmentAndTheOptionChooseTheTransport() async throws {
        let fromEnvironment = try await headersRun([], environment: ["CONVEY_TRANSPORT": "urlSession"])
        #expect(fromEnvironment.transportLine == "* transport: urlsession")
        let fromOption = try await headersRun(["--transport", "urlsession"], environment: ["CONVEY_TRANSPORT": "curl"])
        #expect(fromOption.transportLine == "* transport: urlsession")
        #if os(Linux)
        #expect(fromOption.headers["Accept-Language"] == "en")
        let curl = try await headersRun(["--transport", "curl"], environment: ["CONVEY_TRANSPORT": "urlSession"])
        #expect(curl.transportLine == "* transport: curl")
        #expect(curl.headers["Accept-Language"] == nil)
        #endif
    }

    @Test(arguments: ["urlsession", "URLSESSION", "UrlSession"])
    func everySpellingTheHarnessAcceptsChoosesURLSession(spelling: String) async throws {
        let run = try await headersRun([], environment: ["CONVEY_TRANSPORT": spelling])
        #expect(run.transportLine == "* transport: urlsession")
        #if os(Linux)
        // The library's own default reads the variable the same way: URLSession sends Accept-Language.
        #expect(run.headers["Accept-Language"] == "en")
        #endif
    }

    @Test func fullURLsChooseTheServerAndStatusesMapToExitCodes() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try TestServers.httpbin().urlString(forPath: "")
        let notFound = try await HarnessProcess.run(["get", httpbin + "/status/404"], records: records.url)
        let unavailable = try await HarnessProcess.run(["get", httpbin + "/status/503"], records: records.url)
        let form = try await HarnessProcess.run(["post", httpbin + "/post", "--data-urlencode", "city=Zürich"], records: records.url)

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
        _ = try await HarnessProcess.run(["patch", httpbin + "/patch", "--json", #"{"v": "1"}"#], records: records.url)

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
        let type = try FileManager.default.attributesOfItem(atPath: "/dev/null")[.type] as? FileAttributeType
        #expect(type == .typeCharacterSpecial, "-o /dev/null writes into the device and never replaces it")
    }

    @Test func verboseListsEveryFieldHTTPBinReceivedWithCredentialsMasked() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try TestServers.httpbin().urlString(forPath: "")
        // --body-only into a file: the body as received, with the Authorization httpbin saw unmasked.
        let run = try await HarnessProcess.run(["get", httpbin + "/headers", "-v", "--body-only", "-H", "Authorization: Bearer s3cret-token"],
                                               records: records.url)
        #expect(run.status == 0, "\(run.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let received = try #require(object["headers"] as? [String: String])
        #expect(received["Authorization"] == "Bearer s3cret-token")

        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("> GET /headers HTTP/1.1"), "the request line as sent: \(run.stderr)")
        // The fields the transport adds, which Convey's request does not hold, as httpbin received them.
        let host = try #require(received["Host"])
        let accept = try #require(received["Accept"])
        #expect(lines.contains("> Host: \(host)"), "\(run.stderr)")
        #expect(lines.contains("> Accept: \(accept)"), "\(run.stderr)")
        for (name, value) in received where name != "Authorization" {
            #expect(lines.contains("> \(name): \(value)"), "\(name) as received: \(run.stderr)")
        }
        #expect(lines.contains("> Authorization: ‹redacted›"))
        #expect(!run.stderr.contains("s3cret"))
        #expect(lines.contains("< HTTP/1.1 200 OK"))
        #expect(lines.contains { $0.hasPrefix("< Content-Type: application/json") })
    }

    @Test func jsonOutputOfAPostHasOneShapeForHeadersAndTheBodyMasked() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try TestServers.httpbin().urlString(forPath: "")
        let run = try await HarnessProcess.run(["post", httpbin + "/post", "--json", #"{"user": "ada", "password": "s3cret"}"#, "--output-json"],
                                               records: records.url)
        #expect(run.status == 0, "\(run.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let request = try #require(object["request"] as? [String: Any])
        let response = try #require(object["response"] as? [String: Any])

        // Both lists: the fields in order, repeats kept, as [name, value] pairs.
        let sent = try #require(request["headers"] as? [[String]])
        let received = try #require(response["headers"] as? [[String]])
        #expect(sent.allSatisfy { $0.count == 2 } && received.allSatisfy { $0.count == 2 })
        let echoed = try #require((response["body"] as? [String: Any])?["headers"] as? [String: String])
        #expect(sent.first { $0.first == "Host" }?.last == echoed["Host"], "the fields the transport added are there: \(sent)")
        #expect(sent.first { $0.first == "Content-Length" }?.last == echoed["Content-Length"])

        let body = try #require(request["body"] as? [String: Any], "the request body, as echo shows it")
        #expect(body["user"] as? String == "ada")
        #expect(body["password"] as? String == "‹redacted›")
        #expect(request["size"] as? Int == 37)
        #expect(!run.stdout.contains("s3cret"))
        // Empty values on one line.
        #expect(run.stdout.contains(#""warnings" : []"#))
        #expect(run.stdout.contains(#""args" : {}"#))
    }

    @Test func demoAgainstHTTPBinBehaves() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try TestServers.httpbin().urlString(forPath: "")
        let run = try await HarnessProcess.run(["demo", "--remote", httpbin], records: records.url)

        #expect(run.status == 0, "\(run.stdout)")
        #expect(run.stdout.contains("against \(httpbin)"))
        #expect(run.stdout.contains("16 behaved as expected, 0 not available yet, 0 misbehaved."))
    }
}
#endif
