#if os(Linux) || os(macOS)
import Foundation
import Testing

/// Manual requests against the embedded server: no network.
@Suite("Harness requests")
struct HarnessRequestTests {
    @Test func getPrintsStatusLineHeadersBodyAndTiming() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["get", "/get", "--url-query", "q=a b&c", "-H", "Accept: application/json"], records: records.url)

        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("HTTP 200 OK\n"))
        #expect(run.stdout.contains("\nContent-Type: application/json\n"))
        #expect(run.stdout.contains(#""q" : "a b&c""#))
        #expect(run.stdout.contains(#""Accept" : "application/json""#))
        #expect(!run.stdout.contains("\u{1B}["), "no colour when stdout is not a terminal")
        // The summary's shape, not its magnitudes: `200 OK · 1.2 ms · 312 B · GET http://…`.
        let summary = try #require(run.stderr.split(separator: "\n").first { $0.hasPrefix("200 OK · ") })
        #expect(summary.wholeMatch(of: /200 OK · \d+\.\d{1,2} m?s · \d+(\.\d)? K?B · GET http:\/\/embedded\.invalid\/get\?.*/) != nil,
                "\(summary)")
    }

    @Test func verboseOutputNamesTheTransport() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["get", "/get", "--verbose"], records: records.url)

        #expect(run.status == 0)
        // The stub sends nothing, so the request shows as Convey handed it over, and says so.
        #expect(run.stderr.hasPrefix("""
            * transport: embedded (no network)
            * the request as Convey handed it to the transport, which reports no head as sent
            > GET /get
            > User-Agent: convey-harness Convey/
            """), "\(run.stderr)")
        #expect(run.stderr.contains("\n>\n< HTTP/1.1 200 OK\n"), "\(run.stderr)")
        #expect(run.stderr.contains("\n< Content-Type: application/json\n"), "\(run.stderr)")
        #expect(run.stdout.hasPrefix("HTTP 200 OK\n"), "-v writes to stderr, as curl's")
    }

    @Test func eachRetryIsSaidAfterTheEchoOfTheAttemptItFollows() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["get", "/status/503", "--retry", "2", "--retry-delay", "0.01", "--echo", "minimum"],
                                               records: records.url)
        #expect(run.status == 3)
        let lines = run.stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("[Convey]") || $0.contains(": retry ") }
        try #require(lines.count == 5, "\(run.stderr)")
        #expect(lines[0].hasPrefix("[Convey] GET http://embedded.invalid/status/503 → 503") && !lines[0].contains("attempt"))
        #expect(lines[1] == "HTTP 503 Service Unavailable: retry 1 of 2 in 10.0 ms")
        #expect(lines[2].contains("· attempt 2 "))
        #expect(lines[3] == "HTTP 503 Service Unavailable: retry 2 of 2 in 10.0 ms")
        #expect(lines[4].contains("· attempt 3 "))
    }

    @Test func jsonOutputIsOneParseableObject() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let started = ContinuousClock.now
        let run = try await HarnessProcess.run(["get", "/anything/x", "--output-json", "--url-query", "page=2", "-H", "Authorization: Bearer s3cret"],
                                               records: records.url)
        let processMilliseconds = started.duration(to: .now) / .milliseconds(1)

        #expect(run.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let request = try #require(object["request"] as? [String: Any])
        let response = try #require(object["response"] as? [String: Any])
        let body = try #require(response["body"] as? [String: Any])
        #expect(request["method"] as? String == "GET")
        #expect(request["url"] as? String == "http://embedded.invalid/anything/x?page=2")
        #expect((request["headers"] as? [[String]])?.contains(["Authorization", "‹redacted›"]) == true)
        #expect(response["status"] as? Int == 200)
        #expect((body["args"] as? [String: String]) == ["page": "2"])
        #expect(object["exitCode"] as? Int == 0)
        #expect(object["error"] is NSNull)
        #expect(object["transport"] as? String == "embedded (no network)")
        // The exchange took some time, and no more than the whole process did.
        let durationMs = try #require(object["durationMs"] as? Double)
        #expect(durationMs > 0 && durationMs <= processMilliseconds, "\(durationMs) ms of \(processMilliseconds) ms")
    }

    @Test(arguments: [
        (["get", "/status/404"], 2), (["get", "/status/418"], 2), (["get", "/status/503"], 3), (["get", "/status/302"], 0),
        (["get", "/delay/3", "--timeout", "0.2"], 4), (["get", "/get", "-fail-all-requests"], 4),
        (["post", "/post", "-F", "x=@/nonexistent/file"], 5), (["get", "/status/404", "-f"], 22), (["get", "/status/503", "-fsS"], 22),
        (["get", "/status/302", "-f"], 0), (["get", "/status/418", "--fail-with-body"], 22),
    ])
    func exitCodesFollowTheTable(arguments: [String], expected: Int) async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(arguments, records: records.url)

        #expect(Int(run.status) == expected, "\(arguments): \(run.stderr)")
    }

    @Test func failuresAreExplainedOnStandardErrorAndInJSON() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let human = try await HarnessProcess.run(["get", "/delay/3", "--timeout", "0.2"], records: records.url)
        let machine = try await HarnessProcess.run(["get", "/delay/3", "--timeout", "0.2", "--output-json"], records: records.url)

        #expect(human.stdout.isEmpty)
        #expect(human.stderr.contains("Timed out (attempt limit "))
        #expect(human.stderr.contains(") for http://embedded.invalid/delay/3"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(machine.stdout.utf8)) as? [String: Any])
        let error = try #require(object["error"] as? [String: String])
        #expect(error["kind"] == "timeout")
        #expect(object["response"] is NSNull)
        #expect(object["exitCode"] as? Int == 4)
    }

    @Test func ctrlCCancelsTheRequestAndExitsWith130() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["get", "/delay/10"], records: records.url, interruptAfter: .milliseconds(500))

        // Without the interrupt the request would finish with a 200 and exit 0.
        #expect(run.status == 130)
        #expect(run.stderr.contains("Cancelled: GET http://embedded.invalid/delay/10"))
    }

    @Test func bodiesReachTheServer() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let file = records.url.appending(path: "notes.txt")
        try FileManager.default.createDirectory(at: records.url, withIntermediateDirectories: true)
        try Data("file contents\n".utf8).write(to: file)
        let path = file.path(percentEncoded: false)

        let json = try await echo(["post", "/post", "--json", #"{"name": "Ada", "n": 1}"#], records: records)
        let form = try await echo(["put", "/put", "--data-urlencode", "city=Zürich", "--data-urlencode", "note=a&b"], records: records)
        let multipart = try await echo(["patch", "/patch", "-F", "notes=@\(path)", "-F", "kind=text"], records: records)
        let raw = try await echo(["post", "/post", "--data-binary", "plain text", "-H", "Content-Type: text/plain"], records: records)
        let streamed = try await echo(["delete", "/delete", "--data-binary", "@\(path)", "-H", "Content-Type: application/octet-stream"], records: records)

        let sentJSON = json["json"] as? [String: Any]
        #expect(sentJSON?["name"] as? String == "Ada")
        #expect(sentJSON?["n"] as? Int == 1)
        #expect((json["headers"] as? [String: String])?["Accept"] == "application/json")
        #expect(form["form"] as? [String: String] == ["city": "Zürich", "note": "a&b"])
        #expect(multipart["files"] as? [String: String] == ["notes": "file contents\n"])
        #expect(multipart["form"] as? [String: String] == ["kind": "text"])
        #expect(raw["data"] as? String == "plain text")
        #expect((raw["headers"] as? [String: String])?["Content-Type"] == "text/plain")
        #expect(streamed["data"] as? String == "file contents\n")
    }

    @Test func bodyOnlyAndOutputWriteTheBodyAsReceived() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let output = records.url.appending(path: "body.bin")
        try FileManager.default.createDirectory(at: records.url, withIntermediateDirectories: true)

        let bodyOnly = try await HarnessProcess.run(["get", "/status/404", "--body-only"], records: records.url)
        let binary = try await HarnessProcess.run(["get", "/bytes/2000"], records: records.url)
        let saved = try await HarnessProcess.run(["get", "/bytes/2000", "-o", output.path(percentEncoded: false)], records: records.url)

        #expect(bodyOnly.status == 2 && bodyOnly.stdout.isEmpty)
        #expect(binary.stdout.contains("(2.0 KB of binary data: save it with -o FILE"))
        #expect(saved.status == 0)
        #expect(try Data(contentsOf: output).count == 2000)
    }

    @Test func outputIntoALinkToADeviceWritesThroughIt() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        try FileManager.default.createDirectory(at: records.url, withIntermediateDirectories: true)
        let link = records.url.appending(path: "null")
        try FileManager.default.createSymbolicLink(atPath: link.path(percentEncoded: false), withDestinationPath: "/dev/null")

        let run = try await HarnessProcess.run(["get", "/bytes/100", "-s", "-o", link.path(percentEncoded: false), "-w", "%{http_code}"],
                                               records: records.url)

        #expect(run.status == 0 && run.stdout == "200")
        // As `/dev/stdout` is: a download would have put a file in the link's place.
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path(percentEncoded: false)) == "/dev/null")
    }

    @Test func progressBarShowsOnLongTransfers() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["get", "/drip?numbytes=200000&duration=1", "--progress", "-o", "/dev/null"], records: records.url)
        let quiet = try await HarnessProcess.run(["get", "/drip?numbytes=200000&duration=1", "-o", "/dev/null"], records: records.url)

        #expect(run.status == 0)
        #expect(run.stderr.contains("100%  200.0 KB / 200.0 KB"))
        #expect(run.stderr.contains("█"))
        #expect(!quiet.stderr.contains("█"), "no bar when stderr is not a terminal")
    }

    @Test func echoFlagsPrintConveysEchoToStandardError() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["get", "/get", "--echo", "request,minimum", "-H", "X-Api-Key: k3y"], records: records.url)

        #expect(run.stderr.contains("[Convey] ▶ GET http://embedded.invalid/get"))
        #expect(run.stderr.contains("X-Api-Key: ‹redacted›"))
        #expect(run.stderr.contains("[Convey] GET http://embedded.invalid/get → 200"))
    }

    @Test func colourOnlyWhenAskedOrOnATerminal() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let always = try await HarnessProcess.run(["get", "/get", "--color", "always"], records: records.url)
        let noColor = try await HarnessProcess.run(["get", "/get"], records: records.url, environment: ["NO_COLOR": "1"])

        #expect(always.stdout.contains("\u{1B}[1;32mHTTP 200 OK\u{1B}[0m"))
        #expect(!noColor.stdout.contains("\u{1B}["))
    }

    /// The embedded server's echo of a request the harness sent.
    private func echo(_ arguments: [String], records: RecordsFolder) async throws -> [String: Any] {
        let run = try await HarnessProcess.run(arguments + ["--output-json"], records: records.url)
        try #require(run.status == 0, "\(arguments): \(run.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let response = try #require(object["response"] as? [String: Any])
        return try #require(response["body"] as? [String: Any])
    }
}
#endif
