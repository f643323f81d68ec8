#if os(Linux) || os(macOS)
import Foundation
import Testing

/// Every output mode of the harness, checked for a URL password, a `?token=` value and a cookie,
/// and for a hostile server's terminal escape sequences.
@Suite("Harness output hides secrets and escapes control characters", .wire)
struct HarnessSecretsTests {
    /// `--stream` and `--events` run on the platform's default transport whatever
    /// `CONVEY_TRANSPORT` says: URLSession on Linux refuses streams.
    private static let defaultTransport = ["CONVEY_TRANSPORT": ""]
    static let secrets = ["pw-user1nfo", "tok-query", "cookie-req", "cookie-resp", "tok-event", "cookie-event", "pw-event"]

    /// `http://alice:pw-user1nfo@127.0.0.1:PORT` for a test server.
    static func withUserinfo(_ base: String) -> String {
        base.replacingOccurrences(of: "http://", with: "http://alice:pw-user1nfo@")
    }

    static func leaked(_ run: HarnessRun) -> [String] { secrets.filter(run.output.contains) }

    /// Whether the run wrote a control character a terminal acts on: C0 except line feed and tab, DEL, C1.
    static func wroteControls(_ run: HarnessRun) -> Bool {
        run.output.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) }
    }

    @Test func noModeShowsAPasswordATokenOrACookie() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try Self.withUserinfo(TestServers.httpbin().urlString(forPath: ""))
        let events = try TestServers.events().urlString(forPath: "")
        let request = [httpbin + "/anything?token=tok-query", "-H", "Cookie: s=cookie-req"]
        let say = #"{"password": "pw-event", "cookie": "cookie-event", "url": "http://bob:pw-event@h.example/?token=tok-event"}"#
        let sayQuery = try #require(say.addingPercentEncoding(withAllowedCharacters: .alphanumerics))

        let runs = [
            ("text", try await HarnessProcess.run(["get"] + request + ["-v", "--echo", "full"], records: records.url)),
            ("json", try await HarnessProcess.run(["get"] + request + ["--output-json"], records: records.url)),
            ("stream", try await HarnessProcess.run(["get", httpbin + "/response-headers?Set-Cookie=s%3Dcookie-resp&token=tok-query", "--stream"],
                                                     records: records.url, environment: Self.defaultTransport)),
            ("events", try await HarnessProcess.run(["get", events + "/hostile?say=" + sayQuery, "--events"], records: records.url, environment: Self.defaultTransport)),
            ("error", try await HarnessProcess.run(["get", "http://alice:pw-user1nfo@127.0.0.1:1/x?token=tok-query"], records: records.url)),
            ("json error", try await HarnessProcess.run(["get", "http://alice:pw-user1nfo@127.0.0.1:1/x?token=tok-query", "--output-json"],
                                                         records: records.url)),
            ("bad URL", try await HarnessProcess.run(["get", "http://alice:pw-user1nfo@[::1/x?token=tok-query"], records: records.url)),
            ("recorded list", try await HarnessProcess.run(["recorded", "list"], records: records.url)),
            ("recorded show", try await HarnessProcess.run(["recorded", "show", "3"], records: records.url)),
            ("recorded json", try await HarnessProcess.run(["recorded", "list", "--output-json"], records: records.url)),
        ]

        for (mode, run) in runs {
            #expect(Self.leaked(run) == [], "\(mode): \(run.output)")
        }
        let text = try #require(runs.first?.1)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stderr.contains("> Authorization: ‹redacted›"), "userinfo goes out as Basic credentials: \(text.stderr)")
        #expect(text.stdout.contains("\"token\" : \"‹redacted›\""), "the echoed args are masked: \(text.stdout)")
        #expect(runs[2].1.stderr.contains("Set-Cookie: ‹redacted›"))
        #expect(runs[4].1.stderr.contains("http://127.0.0.1:1/x?token=‹redacted›") || runs[4].1.stderr.contains("‹redacted›@127.0.0.1:1"),
                "\(runs[4].1.stderr)")
    }

    @Test func noCurlOptionShowsAUserACookieOrAnAuthorization() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try TestServers.httpbin().urlString(forPath: "")
        // The response's cookie is in its URL's query too, under a name that is no credential: only its header form counts.
        let secrets = ["pw-user-opt", "cookie-opt", "tok-header", "cookie-file-secret", "pw-bad-user", "tok-query", "s=cookie-resp"]
        let user = ["-u", "alice:pw-user-opt", "-b", "s=cookie-opt"]
        let header = ["-H", "Authorization: Bearer tok-header", "-b", "s=cookie-opt"]
        let writeOut = ["-o", "/dev/null", "-w", "%{json}|%header{set-cookie}|%{url_effective}|%{errormsg}"]
        let responseCookie = httpbin + "/response-headers?Set-Cookie=s%3Dcookie-resp&token=tok-query"

        let runs = [
            ("verbose", try await HarnessProcess.run(["get", httpbin + "/anything"] + user + ["-v", "--echo", "full"], records: records.url)),
            ("verbose header", try await HarnessProcess.run(["get", httpbin + "/anything"] + header + ["-v", "--echo", "full"], records: records.url)),
            ("json", try await HarnessProcess.run(["get", httpbin + "/anything"] + user + ["--output-json"], records: records.url)),
            ("json header", try await HarnessProcess.run(["get", httpbin + "/anything"] + header + ["--output-json"], records: records.url)),
            ("write-out", try await HarnessProcess.run(["get", responseCookie] + user + writeOut, records: records.url)),
            ("write-out header", try await HarnessProcess.run(["get", responseCookie] + header + writeOut, records: records.url)),
            ("fail", try await HarnessProcess.run(["get", httpbin + "/status/401", "-fSv"] + user + writeOut, records: records.url)),
            ("fail json", try await HarnessProcess.run(["get", httpbin + "/status/401", "-f", "--output-json"] + header, records: records.url)),
            ("no response", try await HarnessProcess.run(["get", "http://127.0.0.1:1/x", "-sS"] + user + writeOut, records: records.url)),
            ("-u without a colon", try await HarnessProcess.run(["get", httpbin + "/get", "-u", "pw-bad-user"], records: records.url)),
            ("-H without a colon", try await HarnessProcess.run(["get", httpbin + "/get", "-H", "Authorization Bearer tok-header"], records: records.url)),
            ("-b without a file", try await HarnessProcess.run(["get", httpbin + "/get", "-b", "cookie-file-secret", "-o", "/dev/null"], records: records.url)),
            ("query without =", try await HarnessProcess.run(["get", httpbin + "/get", "--url-query", "tok-query"], records: records.url)),
            ("unknown in a cluster", try await HarnessProcess.run(["get", httpbin + "/get", "-Zpw-bad-user"], records: records.url)),
            ("recorded list", try await HarnessProcess.run(["recorded", "list"], records: records.url)),
            ("recorded show", try await HarnessProcess.run(["recorded", "show", "1"], records: records.url)),
            ("recorded json", try await HarnessProcess.run(["recorded", "list", "--output-json"], records: records.url)),
        ]

        for (mode, run) in runs {
            #expect(secrets.filter(run.output.contains) == [], "\(mode): \(run.output)")
        }
        let verbose = try #require(runs.first?.1)
        #expect(verbose.status == 0, "\(verbose.stderr)")
        #expect(verbose.stderr.contains("> Authorization: ‹redacted›") && verbose.stderr.contains("> Cookie: ‹redacted›"))
        #expect(runs[4].1.stdout.contains("|‹redacted›|"), "%header{set-cookie} is masked: \(runs[4].1.stdout)")
        #expect(runs[6].1.status == 22)
        #expect(runs[9].1.status == 1 && runs[10].1.status == 1 && runs[12].1.status == 1 && runs[13].1.status == 1)
        #expect(runs[11].1.status == 0 && runs[11].1.stderr.contains("-b: an argument without '=' names a cookie file"))
    }

    @Test func aHostileServersEscapeSequencesArriveEscapedInEveryMode() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let hostile = try TestServers.events().urlString(forPath: "/hostile?say=%1B%5D0%3Bsaid%07")

        let runs = [
            ("text", try await HarnessProcess.run(["get", hostile, "-v", "--echo", "full"], records: records.url)),
            ("json", try await HarnessProcess.run(["get", hostile, "--output-json"], records: records.url)),
            ("stream", try await HarnessProcess.run(["get", hostile, "--stream"], records: records.url, environment: Self.defaultTransport)),
            ("events", try await HarnessProcess.run(["get", hostile, "--events"], records: records.url, environment: Self.defaultTransport)),
            ("recorded show", try await HarnessProcess.run(["recorded", "show", "1"], records: records.url)),
            ("recorded json", try await HarnessProcess.run(["recorded", "list", "--output-json"], records: records.url)),
        ]

        for (mode, run) in runs {
            #expect(run.status == 0, "\(mode): \(run.stderr)")
            #expect(!Self.wroteControls(run), "\(mode): \(run.output.debugDescription)")
        }
        #expect(runs[0].1.stdout.contains(#"X-Title: \u{1B}]0;pwned\u{7}\u{1B}[2J"#), "\(runs[0].1.stdout)")
        #expect(runs[0].1.stdout.contains(#"\u{1B}]0;title\u{7}\u{1B}[2J\u{9B}31m \u{1B}]0;said\u{7}"#))
        #expect(runs[2].1.stderr.contains(#"X-Title: \u{1B}]0;pwned"#))
        #expect(runs[3].1.stdout.contains(#"[message id=1] \u{1B}]0;title\u{7}\u{1B}[2J\u{9B}31m \u{1B}]0;said\u{7}"#), "\(runs[3].1.stdout)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(runs[1].1.stdout.utf8)) as? [String: Any])
        let bodyText = (json["response"] as? [String: Any])?["bodyText"] as? String
        #expect(bodyText?.contains("\u{1B}[2J\u{9B}31m") == true, "--output-json escapes as JSON and keeps the value")
    }

    #if canImport(Glibc)
    @Test func bodyOnlyOnATerminalEscapesWhatItWritesAsIsElsewhere() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let hostile = try TestServers.events().urlString(forPath: "/hostile")

        let onTerminal = try await HarnessProcess.runOnTerminal(["get", hostile, "--body-only"], records: records.url)
        let intoFile = try await HarnessProcess.run(["get", hostile, "--body-only"], records: records.url)

        #expect(onTerminal.hasPrefix(#"id: 1"# + "\n" + #"data: \u{1B}]0;title\u{7}\u{1B}[2J\u{9B}31m"#), "\(onTerminal.debugDescription)")
        #expect(!onTerminal.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{9B}" })
        #expect(intoFile.stdout.hasPrefix("id: 1\ndata: \u{1B}]0;title\u{07}\u{1B}[2J\u{9B}31m"), "byte for byte into a file")
    }
    #endif

    @Test func repeatedQueryItemsAndHeadersAreSentInOrder() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let httpbin = try TestServers.httpbin().urlString(forPath: "")

        let run = try await HarnessProcess.run(["get", httpbin + "/anything", "--url-query", "tag=a", "--url-query", "tag=b", "--url-query", "page=1",
                                                "-H", "X-Tag: one", "-H", "X-Tag: two", "--body-only"], records: records.url)

        #expect(run.status == 0, "\(run.stderr)")
        let echo = try JSONDecoder().decode(RepeatedEcho.self, from: Data(run.stdout.utf8))
        #expect(echo.args["tag"] == .many(["a", "b"]))
        #expect(echo.url.hasSuffix("/anything?tag=a&tag=b&page=1"))
        // Separate lines (curl) reach httpbin joined with ",", one combined line (URLSession) with ", ".
        #expect(echo.headers["X-Tag"]?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } == ["one", "two"])
    }
}

/// httpbin's `/anything` echo, where a repeated argument comes as a list.
private struct RepeatedEcho: Decodable {
    enum Values: Decodable, Equatable {
        case one(String), many([String])
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let many = try? container.decode([String].self) { self = .many(many) } else { self = .one(try container.decode(String.self)) }
        }
    }
    let args: [String: Values]
    let headers: [String: String]
    let url: String
}
#endif
