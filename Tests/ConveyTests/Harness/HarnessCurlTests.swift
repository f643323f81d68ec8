#if os(Linux) || os(macOS)
import Foundation
import Testing

/// Every curl option of the harness against the local httpbin and nginx, beside what `curl`
/// does with the same arguments where it is installed: exit status, `-w` output, bodies, files,
/// and the request as httpbin echoes it. Each test also holds the harness to fixed values, so it
/// can fail where curl is missing. No assertion is on time: `%{time_total}` is checked for shape.
@Suite("Harness speaks curl", .wire)
struct HarnessCurlTests {
    /// What the harness and curl did with the same arguments; `curl` is `nil` where it is not installed.
    struct Pair {
        let harness: HarnessRun
        let curl: HarnessRun?

        /// Whether both exited with the same status, when curl ran.
        var sameStatus: Bool { curl.map { $0.status == harness.status } ?? true }
        /// Whether both wrote the same standard output, when curl ran.
        var sameOutput: Bool { curl.map { $0.stdout == harness.stdout } ?? true }
    }

    private let scratch = FileManager.default.temporaryDirectory.appending(path: "convey-harness-curl-\(UUID().uuidString)", directoryHint: .isDirectory)

    init() throws {
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    /// `convey-harness COMMAND URL ARGUMENTS HARNESS-ONLY` and `curl -q ARGUMENTS URL`.
    private func both(_ url: String, _ arguments: [String], command: String = "get", harnessOnly: [String] = [],
                      environment: [String: String] = [:]) async throws -> Pair {
        let records = scratch.appending(path: "records")
        let harness = try await HarnessProcess.run([command, url] + arguments + harnessOnly, records: records, environment: environment)
        #expect(harness.exited, "the harness crashed on \(arguments)")
        guard let curl = CurlCommand.executable else { return Pair(harness: harness, curl: nil) }
        return Pair(harness: harness, curl: try await HarnessProcess.run(["-q"] + arguments + [url], records: records, environment: environment,
                                                                           executable: curl))
    }

    /// A file in the scratch folder with these contents.
    private func file(_ name: String, _ contents: String) throws -> String {
        let url = scratch.appending(path: name)
        try Data(contents.utf8).write(to: url)
        return url.path(percentEncoded: false)
    }

    private func httpbin(_ path: String) throws -> String { try TestServers.httpbin().urlString(forPath: "") + path }
    private func nginx(_ path: String) throws -> String { try TestServers.nginx().urlString(forPath: "") + path }

    /// httpbin's echo of a request, from standard output.
    private func echo(_ run: HarnessRun) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)\n\(run.stderr)")
    }

    private func headers(_ run: HarnessRun) throws -> [String: String] {
        try #require(try echo(run)["headers"] as? [String: String])
    }

    // MARK: Status and failure

    @Test func failExitsWith22AndPrintsNoBody() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let notFound = try await both(try httpbin("/status/404"), ["-fsS"])
        let serverError = try await both(try httpbin("/status/500"), ["-fs", "-w", "%{http_code}"])
        let fine = try await both(try httpbin("/get"), ["-fs", "-o", "/dev/null", "-w", "%{http_code}"])
        let withBody = try await both(try httpbin("/status/418"), ["-s", "--fail-with-body"], harnessOnly: ["--body-only"])

        #expect(notFound.harness.status == 22 && notFound.harness.stdout.isEmpty)
        #expect(notFound.harness.stderr.contains("The requested URL returned error: 404"), "-S says what failed")
        #expect(serverError.harness.status == 22 && serverError.harness.stdout == "500")
        #expect(fine.harness.status == 0 && fine.harness.stdout == "200")
        #expect(withBody.harness.status == 22 && withBody.harness.stdout.contains("teapot"))
        for pair in [notFound, serverError, fine, withBody] {
            #expect(pair.sameStatus && pair.sameOutput, "harness \(pair.harness.status) \(pair.harness.stdout), curl \(pair.curl.map { "\($0.status) \($0.stdout)" } ?? "")")
        }
    }

    // MARK: Redirects

    @Test func aRedirectIsPrintedUnlessLocationFollowsIt() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let format = ["-o", "/dev/null", "-w", "%{http_code} %{num_redirects} %{url_effective} [%{redirect_url}]"]
        let printed = try await both(try httpbin("/redirect/2"), ["-s"] + format)
        let followed = try await both(try httpbin("/redirect/2"), ["-sL"] + format)
        let combined = try await both(try httpbin("/redirect/2"), ["-fsSL"] + format)
        let limited = try await both(try httpbin("/redirect/3"), ["-sL", "--max-redirs", "1", "-o", "/dev/null"])

        #expect(printed.harness.stdout == "302 0 \(try httpbin("/redirect/2")) [\(try httpbin("/relative-redirect/1"))]")
        #expect(followed.harness.stdout == "200 2 \(try httpbin("/get")) []")
        #expect(combined.harness.stdout == followed.harness.stdout)
        for pair in [printed, followed, combined] {
            #expect(pair.harness.status == 0)
            #expect(pair.sameStatus && pair.sameOutput, "harness \(pair.harness.stdout), curl \(pair.curl?.stdout ?? "")")
        }
        // Too many redirects: curl's exit code 47, the harness's 4 (no response).
        #expect(limited.harness.status == 4)
        #expect(limited.curl.map { $0.status != 0 } ?? true)
    }

    // MARK: Credentials and headers

    @Test func headersCredentialsAndCookiesGoOutAsCurlSendsThem() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let arguments = ["-s", "-H", "X-Trace: 7", "-H", "X-Empty;", "-A", "agent/1", "-e", "http://referer.example/", "-u", "al:ice",
                         "-b", "k=v"]
        let pair = try await both(try httpbin("/headers"), arguments, harnessOnly: ["--body-only"])
        let harness = try headers(pair.harness)

        #expect(harness["X-Trace"] == "7")
        #expect(harness["X-Empty"] == "")
        #expect(harness["User-Agent"] == "agent/1")
        #expect(harness["Referer"] == "http://referer.example/")
        #expect(harness["Authorization"] == "Basic " + Data("al:ice".utf8).base64EncodedString())
        #expect(harness["Cookie"] == "k=v")
        if let curl = pair.curl {
            let sent = try headers(curl)
            for name in ["X-Trace", "X-Empty", "User-Agent", "Referer", "Authorization", "Cookie"] {
                #expect(harness[name] == sent[name], "\(name)")
            }
        }
    }

    @Test func userAnswersBasicAuthentication() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let format = ["-s", "-o", "/dev/null", "-w", "%{http_code}"]
        let right = try await both(try httpbin("/basic-auth/al/ice"), ["-u", "al:ice"] + format)
        let wrong = try await both(try httpbin("/basic-auth/al/ice"), ["-u", "al:nope"] + format)

        #expect(right.harness.stdout == "200" && right.harness.status == 0)
        #expect(wrong.harness.stdout == "401")
        #expect(right.sameStatus && right.sameOutput && wrong.sameOutput)
    }

    @Test func cookiesComeFromTextAndFromANetscapeFile() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let host = try #require(URL(string: try httpbin(""))?.host())
        let jar = try file("cookies.txt", """
            # Netscape HTTP Cookie File
            \(host)\tFALSE\t/\tFALSE\t0\tfromfile\tyes
            #HttpOnly_\(host)\tFALSE\t/cookies\tFALSE\t0\thttponly\tyes
            other.example\tFALSE\t/\tFALSE\t0\tforeign\tno
            \(host)\tFALSE\t/\tFALSE\t1\texpired\tno
            \(host)\tFALSE\t/\tTRUE\t0\tsecure\tloopback
            \(host)\tFALSE\t/elsewhere\tFALSE\t0\tpath\tno

            """)
        let pair = try await both(try httpbin("/cookies"), ["-s", "-b", "a=1; b=2", "-b", "c=3", "-b", jar], harnessOnly: ["--body-only"])

        let cookies = try #require(try echo(pair.harness)["cookies"] as? [String: String])
        // A secure cookie goes to a loopback host over http: a secure context, for curl as for browsers.
        #expect(cookies == ["a": "1", "b": "2", "c": "3", "fromfile": "yes", "httponly": "yes", "secure": "loopback"])
        if let curl = pair.curl { #expect(try echo(curl)["cookies"] as? [String: String] == cookies) }
    }

    // MARK: HEAD, time limits, retries

    @Test func headAsksForTheStatusLineAndHeadersOnly() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let head = try await both(try httpbin("/get"), ["-sI"], harnessOnly: ["--body-only"])
        let format = try await both(try httpbin("/get"), ["-sI", "-o", "/dev/null", "-w", "%{http_code} %{method} %{content_type}"])

        #expect(head.harness.stdout.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(head.harness.stdout.lowercased().contains("\r\ncontent-type: application/json\r\n"))
        #expect(head.harness.stdout.hasSuffix("\r\n\r\n"))
        #expect(format.harness.stdout == "200 HEAD application/json")
        #expect(head.curl.map { $0.stdout.hasPrefix("HTTP/1.1 200 OK\r\n") && $0.stdout.lowercased().contains("\r\ncontent-type: application/json\r\n") } ?? true)
        #expect(head.sameStatus && format.sameStatus && format.sameOutput)
    }

    @Test func maxTimeEndsASlowRequestAndARefusedConnectionFails() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let format = ["-s", "-o", "/dev/null", "-w", "%{http_code}"]
        let slow = try await both(try httpbin("/delay/10"), ["--max-time", "1"] + format)
        let refused = try await both("http://127.0.0.1:1/", ["--connect-timeout", "5"] + format)
        let connected = try await both(try httpbin("/get"), ["--connect-timeout", "5"] + format)

        // No response: curl's 28 (timeout) and 7 (cannot connect), the harness's 4.
        #expect(slow.harness.status == 4 && slow.harness.stdout == "000")
        #expect(refused.harness.status == 4 && refused.harness.stdout == "000")
        #expect(connected.harness.status == 0 && connected.harness.stdout == "200")
        #expect(slow.curl.map { $0.status == 28 && $0.stdout == "000" } ?? true)
        #expect(refused.curl.map { $0.status == 7 && $0.stdout == "000" } ?? true)
        #expect(connected.sameStatus && connected.sameOutput)
    }

    @Test func connectTimeoutOnURLSessionIsSaidToDoNothing() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try await HarnessProcess.run(["get", try httpbin("/get"), "--transport", "urlsession", "--connect-timeout", "5", "-o", "/dev/null"],
                                               records: scratch)
        #expect(run.status == 0)
        #expect(run.stderr.contains("--connect-timeout applies to the curl transport only"))
    }

    @Test func retryRetriesTransientStatusesOnly() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let format = ["-o", "/dev/null", "-w", "%{http_code}"]
        let unavailable = try await both(try httpbin("/status/503"), ["--retry", "1", "--retry-delay", "1"] + format)
        let notFound = try await both(try httpbin("/status/404"), ["--retry", "1", "--retry-delay", "1"] + format)

        #expect(unavailable.harness.stdout == "503" && notFound.harness.stdout == "404")
        #expect(unavailable.harness.stderr.contains("HTTP 503 Service Unavailable: retry 1 of 1 in 1.00 s"))
        #expect(unavailable.harness.stderr.contains("· attempt 2 ·"), "\(unavailable.harness.stderr)")
        #expect(!notFound.harness.stderr.contains("retry"))
        // Without -f a status is no failure for curl; the harness exits 3 and 2 for 5xx and 4xx.
        #expect(unavailable.harness.status == 3 && notFound.harness.status == 2)
        #expect(unavailable.sameOutput && notFound.sameOutput)
        #expect(unavailable.curl.map { $0.stderr.components(separatedBy: "Will retry").count == 2 } ?? true)
        #expect(notFound.curl.map { !$0.stderr.contains("Will retry") } ?? true)
    }

    // MARK: Compression

    @Test func compressedAsksForACompressedBodyAndDecodesIt() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let original = try String(contentsOf: try TestServers.nginx("/10k.json"), encoding: .utf8)
        let body = try await both(try nginx("/gz/10k.json"), ["-s", "--compressed"], harnessOnly: ["--body-only"])
        let format = ["-s", "-o", "/dev/null", "-w", "%{http_code} [%header{content-encoding}]"]
        let compressed = try await both(try nginx("/gz/10k.json"), ["--compressed"] + format)
        let plain = try await both(try nginx("/gz/10k.json"), format)
        let asked = try await both(try httpbin("/headers"), ["-s", "--compressed"], harnessOnly: ["--body-only"])
        let notAsked = try await both(try httpbin("/headers"), ["-s"], harnessOnly: ["--body-only"])

        #expect(body.harness.stdout == original && body.sameOutput)
        #expect(compressed.harness.stdout == "200 [gzip]" && compressed.sameOutput)
        #expect(plain.harness.stdout == "200 []" && plain.sameOutput)
        #expect(try headers(asked.harness)["Accept-Encoding"]?.contains("gzip") == true)
        #expect(try asked.curl.map { try headers($0)["Accept-Encoding"]?.contains("gzip") == true } ?? true)
        // Without --compressed curl sends no Accept-Encoding; the harness asks for identity.
        #expect(try headers(notAsked.harness)["Accept-Encoding"] == "identity")
        #expect(try notAsked.curl.map { try headers($0)["Accept-Encoding"] == nil } ?? true)
    }

    // MARK: Resuming

    @Test func continueAtAppendsTheRestOfABody() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let url = try nginx("/1k.bin")
        let whole = try Data(contentsOf: try TestServers.nginx("/1k.bin"))
        let format = ["-s", "-w", "%{http_code}"]
        let harnessFile = scratch.appending(path: "harness.bin")
        let curlFile = scratch.appending(path: "curl.bin")

        func run(_ arguments: [String], into partial: Data?) async throws -> Pair {
            for file in [harnessFile, curlFile] {
                try? FileManager.default.removeItem(at: file)
                if let partial { try partial.write(to: file) }
            }
            let records = scratch.appending(path: "records")
            let harness = try await HarnessProcess.run(["get", url] + arguments + ["-o", harnessFile.path(percentEncoded: false)], records: records)
            var curl: HarnessRun?
            if let executable = CurlCommand.executable {
                curl = try await HarnessProcess.run(["-q"] + arguments + ["-o", curlFile.path(percentEncoded: false), url], records: records,
                                                    executable: executable)
            }
            if curl != nil { #expect(try Data(contentsOf: harnessFile) == Data(contentsOf: curlFile), "\(arguments)") }
            return Pair(harness: harness, curl: curl)
        }

        let resumed = try await run(["-C", "-"] + format, into: whole.prefix(100))
        #expect(resumed.harness.stdout == "206" && resumed.harness.status == 0)
        #expect(try Data(contentsOf: harnessFile) == whole)
        let complete = try await run(["-C", "-"] + format, into: whole)
        #expect(complete.harness.stdout == "416" && complete.harness.status == 0, "nothing left to fetch is no error")
        #expect(try Data(contentsOf: harnessFile) == whole)
        let offset = try await run(["-C", "10"] + format, into: nil)
        #expect(offset.harness.stdout == "206")
        #expect(try Data(contentsOf: harnessFile) == whole.dropFirst(10))
        for pair in [resumed, complete, offset] { #expect(pair.sameStatus && pair.sameOutput) }

        let toOutput = try await both(try nginx("/hello.txt"), ["-s", "-C", "6"], harnessOnly: ["--body-only"])
        #expect(toOutput.harness.stdout == "from nginx\n")
        #expect(toOutput.sameOutput)
    }

    @Test func continueAtAServerThatIgnoresRangesExitsWith33() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let partial = scratch.appending(path: "partial.bin")
        let curlPartial = scratch.appending(path: "curl-partial.bin")
        try Data(repeating: 7, count: 10).write(to: partial)
        try Data(repeating: 7, count: 10).write(to: curlPartial)
        let records = scratch.appending(path: "records")
        let url = try httpbin("/bytes/100")
        let harness = try await HarnessProcess.run(["get", url, "-sS", "-C", "-", "-o", partial.path(percentEncoded: false), "-w", "%{http_code}"],
                                                   records: records)
        var curl: HarnessRun?
        if let executable = CurlCommand.executable {
            curl = try await HarnessProcess.run(["-q", "-sS", "-C", "-", "-o", curlPartial.path(percentEncoded: false), "-w", "%{http_code}", url],
                                                records: records, executable: executable)
        }

        #expect(harness.status == 33 && harness.stdout == "200")
        #expect(harness.stderr.contains("the server does not resume"))
        #expect(try Data(contentsOf: partial).count == 10, "nothing written")
        #expect(curl.map { $0.status == 33 && $0.stdout == "200" } ?? true)
    }

    // MARK: Bodies

    @Test func jsonSendsJSONWithCurlsHeaders() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let document = try file("doc.json", "{\"f\": 1}\n")
        let pair = try await both(try httpbin("/anything"), ["-s", "--json", #"{"a":1}"#, "--json", "@" + document],
                                  command: "post", harnessOnly: ["--body-only"])
        let sent = try echo(pair.harness)
        let sentHeaders = try #require(sent["headers"] as? [String: String])

        #expect(sent["method"] as? String == "POST")
        #expect(sent["data"] as? String == "{\"a\":1}{\"f\": 1}\n")
        #expect(sentHeaders["Content-Type"] == "application/json")
        #expect(sentHeaders["Accept"] == "application/json")
        if let curl = pair.curl {
            let curlSent = try echo(curl)
            #expect(curlSent["data"] as? String == sent["data"] as? String)
            #expect((curlSent["headers"] as? [String: String])?["Content-Type"] == sentHeaders["Content-Type"])
            #expect((curlSent["headers"] as? [String: String])?["Accept"] == sentHeaders["Accept"])
        }
    }

    @Test func dataOptionsBuildTheBodyAsCurlDoes() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let lines = try file("lines.txt", "line1\r\nline2\n")
        let cases: [[String]] = [
            ["-d", "a=1", "-d", "b=2", "-d", "@" + lines],
            ["--data-binary", "@" + lines],
            ["--data-binary", "x y", "-d", "z", "--data-ascii", "w=1"],
            ["--data-urlencode", "city=Zürich & co", "--data-urlencode", "=raw val", "--data-urlencode", "file@" + lines],
            ["--data-raw", "@not-a-file", "--json", "{}"],
            ["--json", "{}", "-d", "a"],
            ["-d", "one", "-H", "Content-Type: text/plain"],
        ]
        let expected: [(form: [String: String], data: String, type: String)] = [
            (["a": "1", "b": "2", "line1line2": ""], "", "application/x-www-form-urlencoded"),
            (["line1\r\nline2\n": ""], "", "application/x-www-form-urlencoded"),
            (["x y": "", "z": "", "w": "1"], "", "application/x-www-form-urlencoded"),
            (["city": "Zürich & co", "raw val": "", "file": "line1\r\nline2\n"], "", "application/x-www-form-urlencoded"),
            ([:], "@not-a-file{}", "application/json"),
            ([:], "{}&a", "application/json"),
            ([:], "one", "text/plain"),
        ]
        for (arguments, expected) in zip(cases, expected) {
            let pair = try await both(try httpbin("/anything"), ["-s"] + arguments, command: "post", harnessOnly: ["--body-only"])
            let sent = try echo(pair.harness)
            #expect(sent["form"] as? [String: String] == expected.form, "\(arguments)")
            #expect(sent["data"] as? String == expected.data, "\(arguments)")
            #expect((sent["headers"] as? [String: String])?["Content-Type"] == expected.type, "\(arguments)")
            if let curl = pair.curl {
                let curlSent = try echo(curl)
                #expect(curlSent["form"] as? [String: String] == expected.form, "curl \(arguments)")
                #expect(curlSent["data"] as? String == expected.data, "curl \(arguments)")
                #expect((curlSent["headers"] as? [String: String])?["Content-Type"] == expected.type, "curl \(arguments)")
            }
        }
    }

    @Test func formSendsMultipartFieldsAndFiles() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let notes = try file("notes.txt", "hello\n")
        let arguments = ["-s", "-F", "name=Ada", "-F", "notes=@" + notes, "-F", "renamed=@\(notes);type=text/x-notes;filename=other.txt",
                         "-F", "inline=<" + notes, "--form-string", "literal=@not-a-file"]
        let pair = try await both(try httpbin("/anything"), arguments, command: "post", harnessOnly: ["--body-only"])
        let sent = try echo(pair.harness)

        #expect(sent["form"] as? [String: String] == ["name": "Ada", "inline": "hello\n", "literal": "@not-a-file"])
        #expect(sent["files"] as? [String: String] == ["notes": "hello\n", "renamed": "hello\n"])
        #expect((sent["headers"] as? [String: String])?["Content-Type"]?.hasPrefix("multipart/form-data; boundary=") == true)
        if let curl = pair.curl {
            let curlSent = try echo(curl)
            #expect(curlSent["form"] as? [String: String] == sent["form"] as? [String: String])
            #expect(curlSent["files"] as? [String: String] == sent["files"] as? [String: String])
        }
    }

    // MARK: -w

    @Test func writeOutReadsItsFormatAsCurlDoes() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let format = #"a\tb\\c\qd%%e%{bogus}f%{http_code} %{content_type} %header{content-type} %{method} %{http_version} %{exitcode}\n%{stderr}to stderr%{stdout}%x%{http_code"#
        let pair = try await both(try httpbin("/get"), ["-s", "-o", "/dev/null", "-w", format])
        let fromFile = try await both(try httpbin("/get"), ["-s", "-o", "/dev/null", "-w", "@" + (try file("format.txt", #"%{http_code}\n"#))])
        let shape = try await both(try httpbin("/get"), ["-s", "-o", "/dev/null", "-w", "%{time_total} %{time_connect} %{size_download}"])

        #expect(pair.harness.stdout == "a\tb\\\\c\\qd%ef200 application/json application/json GET 1.1 0\n%x%{http_code")
        #expect(pair.harness.stderr.contains("unknown --write-out variable: 'bogus'"))
        #expect(pair.harness.stderr.contains("to stderr"))
        #expect(fromFile.harness.stdout == "200\n")
        #expect(shape.harness.stdout.wholeMatch(of: /\d+\.\d{6} \d+\.\d{6} \d+/) != nil, "\(shape.harness.stdout)")
        #expect(pair.sameOutput && fromFile.sameOutput && pair.sameStatus)
        #expect(pair.curl.map { $0.stderr.contains("unknown --write-out variable: 'bogus'") && $0.stderr.contains("to stderr") } ?? true)
        #expect(shape.curl.map { $0.stdout.wholeMatch(of: /\d+\.\d{6} \d+\.\d{6} \d+/) != nil } ?? true)
    }

    // MARK: TLS and proxies (CurlTransport: URLSession refuses these settings)

    #if os(Linux)
    @Test func insecureVerboseAndProxiesAsCurl() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let format = ["-o", "/dev/null", "-w", "%{http_code}"]
        let curlOnly = ["--transport", "curl"]
        let insecure = try await both(try TLSTestServers.url("CONVEY_TLS_EXPIRED_URL", "/hello.txt").absoluteString, ["-vk"] + format,
                                      harnessOnly: curlOnly)
        let refused = try await both(try TLSTestServers.url("CONVEY_TLS_EXPIRED_URL", "/hello.txt").absoluteString, ["-s"] + format,
                                     harnessOnly: curlOnly)
        let proxyURL = try #require(ProcessInfo.processInfo.environment["CONVEY_HTTP_PROXY_URL"])
        let password = try #require(ProcessInfo.processInfo.environment["CONVEY_PROXY_PASSWORD"])
        let proxied = try await both(try httpbin("/get"), ["-s", "-x", proxyURL.replacingOccurrences(of: "http://", with: "http://u:\(password)@")] + format,
                                     harnessOnly: curlOnly)
        let bypassed = try await both(try httpbin("/get"), ["-s", "-x", "http://127.0.0.1:1", "--noproxy", "127.0.0.1"] + format,
                                      harnessOnly: curlOnly)
        let unset = try await both(try httpbin("/get"), ["-s", "--noproxy", "127.0.0.1"] + format, harnessOnly: curlOnly,
                                   environment: ["http_proxy": "http://127.0.0.1:1"])

        #expect(insecure.harness.status == 0 && insecure.harness.stdout == "200")
        #expect(insecure.harness.stderr.contains("> GET "), "-v shows the request")
        #expect(insecure.curl.map { $0.stderr.contains("> GET ") } ?? true)
        #expect(refused.harness.status == 4 && refused.harness.stdout == "000")
        #expect(refused.curl.map { $0.status != 0 && $0.stdout == "000" } ?? true)
        #expect(proxied.harness.stdout == "200" && bypassed.harness.stdout == "200")
        #expect(!proxied.harness.output.contains(password))
        for pair in [insecure, proxied, bypassed] { #expect(pair.sameStatus && pair.sameOutput) }
        #expect(unset.harness.stdout == "200" && unset.harness.status == 0, "--noproxy without -x excepts hosts from the environment's proxy")
    }

    @Test func withoutCompressedACompressedAnswerIsKeptAsItCame() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let url = try TestServers.fault("/gzip-bomb?size=4096").absoluteString
        let harnessFile = scratch.appending(path: "harness.gz")
        let curlFile = scratch.appending(path: "curl.gz")
        let harness = try await HarnessProcess.run(["get", url, "--transport", "curl", "-s", "--body-only"]
                                                   + ["-o", harnessFile.path(percentEncoded: false)], records: scratch)
        #expect(harness.status == 0)
        let kept = try Data(contentsOf: harnessFile)
        #expect(kept.starts(with: [0x1F, 0x8B]), "the gzip stream as it came, as curl keeps it without --compressed")
        if let curl = CurlCommand.executable {
            _ = try await HarnessProcess.run(["-q", "-s", "-o", curlFile.path(percentEncoded: false), url], records: scratch, executable: curl)
            #expect(try Data(contentsOf: curlFile) == kept)
        }
    }

    @Test func aColonAloneRemovesAHeaderConveySends() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let pair = try await both(try httpbin("/headers"), ["-s", "-H", "User-Agent:"], harnessOnly: ["--body-only", "--transport", "curl"])
        #expect(try headers(pair.harness)["User-Agent"] == nil)
        #expect(try pair.curl.map { try headers($0)["User-Agent"] == nil } ?? true)
    }
    #endif
}

/// The `curl` command, where it is installed.
enum CurlCommand {
    static let executable: URL? = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        .split(separator: ":").map { URL(filePath: String($0)).appending(path: "curl") }
        .first { FileManager.default.isExecutableFile(atPath: $0.path(percentEncoded: false)) }
}
#endif
