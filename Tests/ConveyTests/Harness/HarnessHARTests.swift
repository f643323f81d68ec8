#if os(Linux) || os(macOS)
import Foundation
import Testing

/// `recorded export --har`, `--record-har` and `--fixtures` on the built harness.
@Suite("Harness HAR files")
struct HarnessHARTests {
    @Test func anExchangeRecordedAsHARReplaysOfflineAndAnUnmatchedRequestExitsNamingIt() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let har = scratch.file("session.har").path(percentEncoded: false)

        let live = try await HarnessProcess.run(["get", "/get", "--url-query", "page=2", "--record-har", har, "--body-only"], records: records.url)
        let replayed = try await HarnessProcess.run(["get", "/get", "--url-query", "page=2", "--fixtures", har, "--body-only"], records: records.url)
        let unmatched = try await HarnessProcess.run(["get", "/get", "--url-query", "page=3", "--fixtures", har], records: records.url)
        let missing = try await HarnessProcess.run(["get", "/get", "--fixtures", scratch.file("none.har").path(percentEncoded: false)],
                                                   records: records.url)

        #expect(live.status == 0)
        #expect(replayed.status == 0)
        #expect(replayed.stdout == live.stdout)
        #expect(replayed.stdout.contains(#""page" : "2""#))
        #expect(unmatched.status == 5)
        #expect(unmatched.stderr.contains("No entry in \(har) answers GET http://embedded.invalid/get?page=3"))
        #expect(missing.status == 5)
        #expect(missing.stderr.contains("there is no such file"))
        #expect(try HARText.entries(of: scratch.file("session.har")).count == 1)
    }

    @Test func recordedExportWritesEveryRecordAsHAR() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let scratch = try HARScratch()
        defer { scratch.remove() }
        _ = try await HarnessProcess.run(["get", "/get"], records: records.url)
        _ = try await HarnessProcess.run(["post", "/post", "--json", #"{"name": "Ada"}"#], records: records.url)
        let file = scratch.file("records.har")

        let export = try await HarnessProcess.run(["recorded", "export", "--har", file.path(percentEncoded: false)], records: records.url)
        let usage = try await HarnessProcess.run(["recorded", "export"], records: records.url)
        let misplaced = try await HarnessProcess.run(["recorded", "list", "--har", file.path(percentEncoded: false)], records: records.url)

        #expect(export.status == 0)
        #expect(export.stdout == "Wrote 2 entries to \(file.path(percentEncoded: false)).\n")
        let methods = try HARText.entries(of: file).compactMap { ($0["request"] as? [String: Any])?["method"] as? String }
        #expect(methods == ["GET", "POST"])
        #expect(usage.status == 1)
        #expect(usage.stderr.contains("recorded export needs --har FILE"))
        #expect(misplaced.status == 1)
    }

    @Test(.wire) func noExportHoldsAPasswordATokenACookieOrURLUserinfo() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let live = scratch.file("live.har").path(percentEncoded: false)
        let httpbin = try TestServers.httpbin().urlString(forPath: "")
        let withUserinfo = httpbin.replacingOccurrences(of: "http://", with: "http://alice:pw-user1nfo@")
        let base64Userinfo = Data("alice:pw-user1nfo".utf8).base64EncodedString()
        let secrets = ["pw-user1nfo", base64Userinfo, "tok-query", "cookie-req", "pw-body", "tok-header"]

        // httpbin echoes every request header in its JSON body, and the response cookie's value
        // would be in the URL asking httpbin to set it: so the cookie and token here are the request's.
        _ = try await HarnessProcess.run(["get", withUserinfo + "/anything?token=tok-query", "-H", "Cookie: s=cookie-req",
                                          "--record-har", live], records: records.url)
        _ = try await HarnessProcess.run(["get", httpbin + "/bearer", "-H", "Authorization: Bearer tok-header", "--record-har", live],
                                         records: records.url)
        _ = try await HarnessProcess.run(["post", httpbin + "/post", "--json", #"{"password": "pw-body"}"#, "--record-har", live],
                                         records: records.url)
        let plain = scratch.file("plain.har").path(percentEncoded: false)
        let kept = scratch.file("kept.har").path(percentEncoded: false)
        let exports = [
            try await HarnessProcess.run(["recorded", "export", "--har", plain], records: records.url),
            try await HarnessProcess.run(["recorded", "export", "--har", kept, "--include-secrets"], records: records.url),
        ]

        #expect(exports.map(\.status) == [0, 0])
        for file in [live, plain, kept] {
            let text = try String(contentsOf: URL(filePath: file), encoding: .utf8)
            #expect(try HARText.entries(of: URL(filePath: file)).count == 3)
            for secret in secrets { #expect(!text.contains(secret), "\(file) holds \(secret)") }
        }
        #expect(try String(contentsOf: URL(filePath: kept), encoding: .utf8).contains("This file holds credentials"))
    }
}
#endif
