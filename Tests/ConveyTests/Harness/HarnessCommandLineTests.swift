#if os(Linux) || os(macOS)
import Foundation
import Testing

@Suite("Harness command line")
struct HarnessCommandLineTests {
    static let commands = ["demo", "get", "post", "put", "patch", "delete", "recorded", "replay", "tls"]

    @Test(arguments: commands)
    func everyCommandHasHelp(command: String) async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run([command, "--help"], records: records.url)

        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("Usage: convey-harness \(command)"))
        #expect(run.stdout.contains("Exit codes:"))
        #expect(run.stderr.isEmpty)
    }

    @Test func topLevelHelpListsTheCommands() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let help = try await HarnessProcess.run(["--help"], records: records.url)
        let helpCommand = try await HarnessProcess.run(["help", "get"], records: records.url)
        let bare = try await HarnessProcess.run([], records: records.url)
        let version = try await HarnessProcess.run(["--version"], records: records.url)

        #expect(help.status == 0)
        for command in Self.commands { #expect(help.stdout.contains("\n  \(command) ")) }
        #expect(helpCommand.status == 0 && helpCommand.stdout.hasPrefix("Usage: convey-harness get"))
        #expect(bare.status == 1)
        #expect(bare.stderr.contains("Usage: convey-harness COMMAND"))
        #expect(version.status == 0 && version.stdout.hasPrefix("convey-harness "))
    }

    @Test(arguments: [
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["get", "/get", "--bogus"], "unknown option '--bogus'"),
        (["get"], "get needs a PATH"),
        (["get", "/a", "/b", "-o", "out.bin"], "-o FILE takes one URL: each of 2 would replace the last"),
        (["get", "/get", "--timeout"], "option '--timeout' needs a value"),
        (["get", "/get", "--timeout", "soon"], "--timeout: 'soon' is not a number of seconds"),
        (["get", "/get", "--output-json=yes"], "option '--output-json' takes no value"),
        (["get", "/get", "-H", "no colon"], "-H: expected 'NAME: VALUE'"),
        (["get", "/get", "-H", "bad name: x"], "-H: 'bad name' is not a valid header name"),
        (["get", "/get", "--url-query", "novalue"], "--url-query: expected NAME=VALUE"),
        (["get", "/get", "--remote", "ftp://x"], "--remote: 'ftp://x' is not an absolute http(s) URL"),
        (["get", "/get", "--color", "purple"], "--color: 'purple' is not one of auto, always, never"),
        (["get", "/get", "--echo", "loud"], "--echo: 'loud' is not one of"),
        (["get", "/get", "--transport", "pigeon"], "--transport: 'pigeon' is not one of curl, urlsession"),
        (["get", "/get", "--json", "{}"], "GET requests cannot carry a body"),
        (["get", "/get", "-d", "a=b"], "GET requests cannot carry a body"),
        (["post", "/post", "--json", "{}", "-F", "a=b"], "choose one kind of body"),
        (["post", "/post", "-F", "notes.txt"], "-F: expected NAME=VALUE"),
        (["post", "/post", "-F", "a=@x.txt;size=3"], "-F: unknown part parameter 'size'"),
        (["post", "/post", "-I"], "-I sends a HEAD request: use it with get"),
        (["get", "/get", "-X", "POST"], "unknown option '-X' (curl's -X: the command names the method"),
        (["get", "/get", "-fsZ"], "unknown option '-Z'"),
        (["get", "/get", "-C", "end"], "-C: 'end' is not '-' or a byte offset"),
        (["get", "/get", "-u", "alice"], "-u: expected USER:PASSWORD"),
        (["get", "/get", "--retry", "many"], "--retry: 'many' is not a number of retries"),
        (["get", "/get", "--retry-delay", "1"], "--retry-delay and --retry-all-errors need --retry N"),
        (["get", "/get", "--retry", "1", "--retry-delay", "-1"], "--retry-delay: '-1' is not a number of seconds between 0 and 86400"),
        (["get", "/get", "-f", "--fail-with-body"], "choose -f or --fail-with-body"),
        (["get", "/get", "--max-redirs", "x"], "--max-redirs: 'x' is not a number of redirects"),
        (["get", "/get", "-sSo"], "option '-o' needs a value"),
        (["recorded"], "recorded needs a subcommand"),
        (["recorded", "show"], "recorded show needs one record number or ID"),
        (["replay"], "replay needs one record number or ID"),
        (["demo", "99"], "'99' is not a step number"),
    ])
    func badCommandLinesExitWithTheUsageCode(arguments: [String], message: String) async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(arguments, records: records.url)

        #expect(run.status == 1)
        #expect(run.stderr.contains(message))
        #expect(run.stderr.contains("--help' for usage."))
    }

    @Test func anUnknownTransportInTheEnvironmentIsAUsageError() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["get", "/get"], records: records.url, environment: ["CONVEY_TRANSPORT": "pigeon"])

        #expect(run.status == 1)
        #expect(run.stderr.contains("CONVEY_TRANSPORT: 'pigeon' is not one of curl, urlsession"))
    }

    @Test func optionsHelpIsTheTableInTheDocs() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["help", "options"], records: records.url)
        let docs = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Docs/harness.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let start = try #require(text.range(of: "<!-- convey-harness help options -->\n"))
        let end = try #require(text.range(of: "\n<!-- end of convey-harness help options -->", range: start.upperBound..<text.endIndex))

        #expect(run.status == 0)
        #expect(run.stdout.contains("| `-f, --fail` | same |"))
        #expect(run.stdout.contains("| `-X, --request` |"), "curl's options the harness lacks are listed too")
        #expect(String(text[start.upperBound..<end.lowerBound]) == run.stdout.trimmingCharacters(in: .newlines),
                "Docs/harness.md lists every option as 'convey-harness help options' prints them: paste its output there")
    }

    @Test func combinedShortFlagsAndOptionsBeforeTheCommand() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let combined = try await HarnessProcess.run(["get", "/status/404", "-fsS"], records: records.url)
        let attached = try await HarnessProcess.run(["get", "/get", "-sw%{http_code}", "-o/dev/null"], records: records.url)
        let before = try await HarnessProcess.run(["-sSo", "/dev/null", "-w", "%{http_code}", "get", "/get"], records: records.url)

        #expect(combined.status == 22 && combined.stdout.isEmpty && combined.stderr.contains("returned error: 404"))
        #expect(attached.status == 0 && attached.stdout == "200")
        #expect(before.status == 0 && before.stdout == "200")
    }

    @Test func noInputCrashesTheHarness() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let lines: [[String]] = [
            [""], ["-"], ["--"], ["--", "get"], ["get", ""], ["get", "-"], ["get", "%zz"], ["get", "http://"],
            ["get", "http://[::1"], ["get", "/ünïcødé path?x=1#frag"], ["get", String(repeating: "a/", count: 5000)],
            ["get", "/get", "-H", ":"], ["get", "/get", "-H", "X:\u{0}"], ["get", "/get", "--url-query", "=x"],
            ["post", "/post", "-F", "x=@/nonexistent/file"], ["post", "/post", "--data", "@"], ["post", "/post", "-F", "x=<"],
            ["post", "/post", "--data-urlencode", "@/nonexistent"], ["get", "/get", "-w", "%{"], ["get", "/get", "-w", "\\"], ["get", "/get", "-C", "-"],
            ["get", "/get", "-b", ""], ["get", "/get", "-b", "/nonexistent"], ["get", "/get", "--max-time", "0"], ["get", "/get", "-sSfL"],
            ["post", "/post", "--data", "@/nonexistent"], ["get", "/get", "--timeout", "-1"],
            ["get", "/get", "--timeout", "nan"], ["get", "/get", "--timeout", "1e309"], ["recorded", "show", "-5"],
            ["recorded", "show", "99999999999999999999999"], ["replay", "0"], ["--records", "", "recorded", "list"],
            ["get", "/get", "--output", ""], ["get", "/bytes/-4"], ["get", "/status/abc"], ["get", "/delay/-1"],
            ["get", "/drip?numbytes=-5&duration=nan"], ["demo", "--list", "extra"], ["-fail-all-requests"],
        ]
        for arguments in lines {
            let run = try await HarnessProcess.run(arguments, records: records.url)
            #expect(run.exited, "crashed on \(arguments)")
            #expect([0, 1, 2, 3, 4, 5].contains(run.status), "exit \(run.status) on \(arguments): \(run.stderr)")
        }
    }
}
#endif
