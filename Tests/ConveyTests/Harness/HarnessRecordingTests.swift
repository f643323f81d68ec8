#if os(Linux) || os(macOS)
import Foundation
import Testing

/// `recorded list|show|clear` and `replay` on a temporary records folder.
@Suite("Harness recorded tasks")
struct HarnessRecordingTests {
    @Test func listShowAndClearTheRecordsOfEarlierRuns() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        _ = try await HarnessProcess.run(["get", "/get", "-H", "Authorization: Bearer s3cret", "--url-query", "token=t0ken"], records: records.url)
        _ = try await HarnessProcess.run(["post", "/post", "--json", #"{"a": 1}"#], records: records.url)

        let list = try await HarnessProcess.run(["recorded", "list"], records: records.url)
        let show = try await HarnessProcess.run(["recorded", "show", "2"], records: records.url)
        let json = try await HarnessProcess.run(["recorded", "show", "1", "--output-json"], records: records.url)
        let missing = try await HarnessProcess.run(["recorded", "show", "3"], records: records.url)

        #expect(list.status == 0)
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains("POST") == true && lines.first?.contains("http://embedded.invalid/post") == true)
        #expect(lines.last?.contains("GET") == true && lines.last?.contains("token=‹redacted›") == true)
        #expect(list.stderr.contains("2 records in"))
        #expect(show.status == 0)
        #expect(show.stdout.contains("Authorization: ‹redacted›"))
        #expect(show.stdout.contains("Masked when recorded: URL query, header Authorization"))
        #expect(!show.stdout.contains("Authorization: Bearer s3cret"))
        #expect(show.stdout.contains("GET http://embedded.invalid/get?token=‹redacted›\n"))
        let record = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(record["method"] as? String == "POST")
        #expect(record["statusCode"] as? Int == 200)
        #expect(record["formatVersion"] as? Int == 2)
        #expect(missing.status == 5)
        #expect(missing.stderr.contains("no record 3: there are 2 records"))

        let clear = try await HarnessProcess.run(["recorded", "clear"], records: records.url)
        let empty = try await HarnessProcess.run(["recorded", "list"], records: records.url)
        #expect(clear.stdout.hasPrefix("Removed 2 records from"))
        #expect(empty.stdout.hasPrefix("No records in"))
    }

    @Test func aCorruptRecordIsSkippedNotFatal() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        _ = try await HarnessProcess.run(["get", "/get"], records: records.url)
        try Data("{ broken".utf8).write(to: records.url.appending(path: "20200101T000000000Z-0badf00d.json"))

        let list = try await HarnessProcess.run(["recorded", "list"], records: records.url)
        let show = try await HarnessProcess.run(["recorded", "show", "20200101T000000000Z-0badf00d"], records: records.url)

        #expect(list.status == 0)
        #expect(list.stdout.split(separator: "\n").count == 1)
        #expect(list.stderr.contains("1 unreadable record skipped: 20200101T000000000Z-0badf00d"))
        #expect(show.status == 5)
    }

    @Test func noRecordWritesNothing() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        _ = try await HarnessProcess.run(["get", "/get", "--no-record"], records: records.url)

        #expect(!FileManager.default.fileExists(atPath: records.url.path(percentEncoded: false)))
    }

    @Test func replayResendsTheRecordedRequest() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        _ = try await HarnessProcess.run(["put", "/put", "--json", #"{"name": "Ada"}"#, "-H", "X-Trace: 7"], records: records.url)

        let replay = try await HarnessProcess.run(["replay", "1", "--output-json"], records: records.url)

        #expect(replay.status == 0, "\(replay.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(replay.stdout.utf8)) as? [String: Any])
        let body = try #require((object["response"] as? [String: Any])?["body"] as? [String: Any])
        #expect(body["method"] as? String == "PUT")
        #expect((body["json"] as? [String: String]) == ["name": "Ada"])
        #expect((body["headers"] as? [String: String])?["X-Trace"] == "7")
    }

    @Test func replayRefusesMaskedCredentialsUnlessGivenAgain() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        _ = try await HarnessProcess.run(["get", "/headers", "-H", "Authorization: Bearer s3cret"], records: records.url)

        let refused = try await HarnessProcess.run(["replay", "1"], records: records.url)
        // --body-only into a file writes the body as received; every other output masks it.
        let given = try await HarnessProcess.run(["replay", "1", "-H", "Authorization: Bearer again", "--body-only"], records: records.url)

        #expect(refused.status == 5)
        #expect(refused.stderr.contains("record 1 cannot be replayed: its Authorization header was masked when recorded"))
        #expect(given.status == 0, "\(given.stderr)")
        #expect(given.stdout.contains(#""Authorization" : "Bearer again""#))
    }
}
#endif
