#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
import Testing

/// `convey-harness ws URL` against the WebSocket test servers, on the curl transport: standard
/// input's lines out, text messages alone on standard output, JSON lines per event, exit codes.
@Suite("Harness ws on the wire", .wire)
struct HarnessWebSocketTests {
    /// The curl transport, whatever `CONVEY_TRANSPORT` says: URLSession on Linux carries no WebSocket.
    private static let curl = ["CONVEY_TRANSPORT": "curl"]

    private func url(_ base: URL?, _ path: String) throws -> String {
        try #require(base, "the WebSocket test servers are not up: run the suite with scripts/test").absoluteString + path
    }

    /// The harness's `ws` with `input` on standard input, then its end; with `input` `nil`, standard
    /// input stays open, so that what the test checks is the server's doing, not the close the end
    /// of input makes.
    private func ws(_ arguments: [String], input: String? = "") async throws -> HarnessRun {
        let records = RecordsFolder()
        defer { records.remove() }
        return try await HarnessProcess.run(["ws"] + arguments, records: records.url, environment: Self.curl, input: input,
                                            holdsInputOpen: input == nil)
    }

    @Test func eachLineGoesOutAndEachTextMessageIsPrintedAlone() async throws {
        let id = UUID().uuidString
        // The raw server echoes each message before it answers the close that follows them.
        let run = try await ws([try url(TestServers.rawWebSocketURL, "/echo?id=\(id)")], input: "one\ntwo words\nthree\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "one\ntwo words\nthree\n")
        #expect(run.stderr.contains("HTTP/1.1 101 Switching Protocols"))
        #expect(run.stderr.contains("closed 1000 by the client"))
        let result = try await WebSocketServers.rawResult(id)
        #expect(result["messages"] as? Int == 3)
        #expect((result["close"] as? [String: Any])?["code"] as? Int == 1000)
    }

    @Test func outputJSONWritesOneObjectPerEvent() async throws {
        let run = try await ws([try url(TestServers.rawWebSocketURL, "/echo"), "--output-json"], input: "hello\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").map(String.init) == [
            #"{"event":"open","protocol":null,"extensions":[]}"#,
            #"{"event":"message","type":"text","data":"hello"}"#,
            #"{"event":"close","code":1000,"reason":"","by":"client"}"#,
        ])
    }

    @Test func theOpenEventNamesTheSubprotocolAndExtensions() async throws {
        let run = try await ws([try url(TestServers.webSocketURL, "/echo"), "--output-json", "--protocol", "chat"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").first == #"{"event":"open","protocol":"chat","extensions":["permessage-deflate; server_max_window_bits=12; client_max_window_bits=12"]}"#)
        let plain = try await ws([try url(TestServers.webSocketURL, "/echo"), "--output-json", "--no-compression"])
        #expect(plain.stdout.split(separator: "\n").first == #"{"event":"open","protocol":null,"extensions":[]}"#)
    }

    @Test func binaryLinesAreHexBothWays() async throws {
        let run = try await ws([try url(TestServers.rawWebSocketURL, "/echo"), "--binary"], input: "00ff10\nnot hex\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "00ff10\n")
        #expect(run.stderr.contains("is not hex"))
        let json = try await ws([try url(TestServers.rawWebSocketURL, "/echo"), "--binary", "--output-json"], input: "cafe\n")
        #expect(json.stdout.contains(#"{"event":"message","type":"binary","hex":"cafe"}"#))
    }

    @Test func theServersCloseIsACleanEndWhateverItsCode() async throws {
        let run = try await ws([try url(TestServers.webSocketURL, "/close/4001?reason=bye"), "--output-json"], input: nil)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").last == #"{"event":"close","code":4001,"reason":"bye","by":"server"}"#)
    }

    @Test func aProtocolErrorClosesFromTheClientAndExits4() async throws {
        let run = try await ws([try url(TestServers.rawWebSocketURL, "/bad-utf8"), "--output-json"], input: nil)
        #expect(run.status == 4)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.dropFirst().first == #"{"event":"close","code":1007,"reason":"","by":"client"}"#)
        #expect(lines.last?.hasPrefix(#"{"event":"error","kind":"protocolError","detail":"#) == true)
        let big = try await ws([try url(TestServers.rawWebSocketURL, "/big/2000"), "--max-message-size", "1000", "--output-json"], input: nil)
        #expect(big.status == 4)
        #expect(big.stdout.contains(#"{"event":"close","code":1009,"reason":"","by":"client"}"#))
    }

    @Test func aRefusedHandshakeExitsWithItsStatusClass() async throws {
        let run = try await ws([try url(TestServers.webSocketURL, "/auth/echo"), "--output-json"])
        #expect(run.status == 2)
        #expect(run.stdout.hasPrefix(#"{"event":"error","kind":"http","detail":"HTTP 401 Unauthorized"#))
        let authorized = try await ws([try url(TestServers.webSocketURL, "/auth/echo"), "-H", "Authorization: Bearer good"])
        #expect(authorized.status == 0, "\(authorized.stderr)")
        #expect(!authorized.output.contains("Bearer good"))
    }

    @Test func aLostConnectionExits4() async throws {
        let run = try await ws([try url(TestServers.rawWebSocketURL, "/vanish-mid-frame"), "--output-json"], input: nil)
        #expect(run.status == 4)
        #expect(run.stdout.split(separator: "\n").last?.hasPrefix(#"{"event":"error","kind":"connectionLost""#) == true)
    }

    @Test func wssTrustsTheCertificateAuthorityGiven() async throws {
        let run = try await ws([try url(TestServers.secureWebSocketURL, "/echo"), "--cacert", try TLSTestServers.file("ca.crt").path()])
        #expect(run.status == 0, "\(run.stderr)")
        let untrusted = try await ws([try url(TestServers.secureWebSocketURL, "/echo")])
        #expect(untrusted.status == 4)
    }

    @Test func aURLThatIsNoWebSocketsIsAUsageError() async throws {
        #expect(try await ws(["ftp://127.0.0.1/x"]).status == 1)
        #expect(try await ws([]).status == 1)
        #expect(try await ws(["ws://127.0.0.1:1/x", "--max-message-size", "none"]).status == 1)
    }
}
#endif
