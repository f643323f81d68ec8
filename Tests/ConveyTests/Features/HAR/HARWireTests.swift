import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Get: ServerTask {
    let server: ConveyServer
    let path: String
    var items: [URLQueryItem] = []
    var queryItems: [URLQueryItem] { items }
}

private struct Unavailable: ServerTask {
    let server: ConveyServer
    var path: String { "status/503" }
    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { count < 2 ? 0 : nil }
}

private struct SignIn: FormUploadingTask {
    let server: ConveyServer
    var path: String { "post" }
    var method: HTTPMethod { .post }
    var uploadPayload: [String: String]? { ["user": "ada", "password": "wire-pa55word"] }
}

/// What one pass over httpbin brought back, for comparing a live run with its replay.
private struct Outcome: Equatable {
    var gzip: Data
    var redirectedURL: String
    var redirectedBody: Data
    var unavailableStatus: Int?
    var bytes: Data
    var repeatedFields: [String]
    var form: Data
}

/// A live run captured as HAR on each real transport against the local httpbin, then replayed
/// offline: the same results, each redirect and retry an entry of its own, a file the HAR schema accepts.
@Suite("HAR capture and replay on the wire", .wire)
@ConveyActor
struct HARWireTests {
    private func run(on server: ConveyServer) async throws -> Outcome {
        let gzip = try await Get(server: server, path: "gzip").download()
        let redirected = try await Get(server: server, path: "redirect/2").download()
        var unavailableStatus: Int?
        do {
            try await Unavailable(server: server).send()
        } catch let error as HTTPError {
            unavailableStatus = error.statusCode
        }
        let bytes = try await Get(server: server, path: "bytes/64", items: [URLQueryItem(name: "seed", value: "3")]).download()
        let repeated = try await Get(server: server, path: "response-headers",
                                     items: [URLQueryItem(name: "X-Twice", value: "a"), URLQueryItem(name: "X-Twice", value: "b")]).download()
        let form = try await SignIn(server: server).download()
        return Outcome(gzip: gzip.data, redirectedURL: redirected.request.url.path, redirectedBody: redirected.data,
                       unavailableStatus: unavailableStatus, bytes: bytes.data,
                       repeatedFields: repeated.head.fields.values(named: "X-Twice"), form: form.data)
    }

    @Test(arguments: TransportKind.allCases)
    func aLiveRunCapturedAsHARReplaysOfflineWithTheSameResults(_ kind: TransportKind) async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("httpbin.har")
        let server = try httpbinServer()
        server.transport = kind.make()

        let live = try await HARFixtures(file: file, mode: .capture).scope { try await run(on: server) }
        let replaying = try HARFixtures(file: file)
        let offline = try offlineServer(base: try TestServers.httpbin().url.absoluteString)
        let replayed = try await replaying.scope { try await run(on: offline) }

        #expect(live.unavailableStatus == 503)
        #expect(live.redirectedURL == "/get")
        // URLSession joins repeated fields (Docs/transports.md); the capture keeps what the transport gave.
        #expect(live.repeatedFields == (kind == .urlSession ? ["a, b"] : ["a", "b"]))
        // httpbin echoes the form, password included: the file holds it masked, so its replay does too.
        #expect(String(decoding: live.form, as: UTF8.self).contains("wire-pa55word"))
        #expect(String(decoding: replayed.form, as: UTF8.self).contains(#""password" : "‹redacted›""#))
        var unmasked = replayed
        unmasked.form = live.form
        #expect(unmasked == live)
        #expect(replaying.unansweredEntries.isEmpty)

        let entries = try HARText.entries(of: file)
        let lines = entries.map { entry in
            let request = entry["request"] as? [String: Any]
            let status = (entry["response"] as? [String: Any])?["status"] as? Int ?? 0
            return "\(request?["method"] as? String ?? "?") \(URL(string: request?["url"] as? String ?? "")?.path ?? "?") \(status)"
        }
        #expect(lines == ["GET /gzip 200", "GET /redirect/2 302", "GET /relative-redirect/1 302", "GET /get 200",
                          "GET /status/503 503", "GET /status/503 503", "GET /bytes/64 200", "GET /response-headers 200", "POST /post 200"])
        let gzip = try #require(entries.first?["response"] as? [String: Any])
        let content = try #require(gzip["content"] as? [String: Any])
        #expect((content["text"] as? String)?.contains(#""gzipped": true"#) == true)
        #expect((gzip["headers"] as? [[String: String]])?.contains { $0["name"]?.lowercased() == "content-encoding" && $0["value"] == "gzip" } == true)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains("wire-pa55word"))
        #expect(text.contains("password=‹redacted›"))
    }

    @Test(arguments: TransportKind.allCases)
    func timingsComeFromTheTransportsMetricsAndAreMinusOneWhereUnknown(_ kind: TransportKind) async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("timings.har")
        let server = try httpbinServer()
        server.transport = kind.make()

        let response = try await HARFixtures(file: file, mode: .capture).scope { try await Get(server: server, path: "gzip").download() }

        let entry = try #require(try HARText.entries(of: file).first)
        let timings = try #require(entry["timings"] as? [String: Double])
        #expect(timings["blocked"] == -1)
        #expect(timings["send"] == -1)
        #expect(timings.values.allSatisfy { $0 == -1 || $0 >= 0 })
        if response.metrics.firstByte != nil, response.metrics.total != nil {
            #expect(timings["wait"].map { $0 >= 0 } == true)
            #expect(timings["receive"].map { $0 >= 0 } == true)
        } else {
            #expect(timings["wait"] == -1)
        }
        if let onWire = response.metrics.bytesReceived {
            let content = try #require((entry["response"] as? [String: Any])?["content"] as? [String: Any])
            #expect((entry["response"] as? [String: Any])?["bodySize"] as? Int64 == onWire)
            #expect(content["compression"] as? Int64 == Int64(response.data.count) - onWire)
        }
    }

    @Test(.harValidator, arguments: TransportKind.allCases)
    func aCaptureOfRealTrafficPassesTheHARSchema(_ kind: TransportKind) async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("httpbin.har")
        let server = try httpbinServer()
        server.transport = kind.make()

        _ = try await HARFixtures(file: file, mode: .capture).scope { try await run(on: server) }
        let result = try HARValidator.validate([file])

        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("valid HAR 1.2, 9 entries"))
    }

    /// A download to a file and a stream whose body breaks off: the capture keeps what really
    /// happened (the bytes that came, then the failure), so that a replay of the file fails where
    /// the live run failed instead of succeeding with a whole body.
    @Test(arguments: TransportKind.allCases, ["file", "stream"])
    func aBodyThatBrokeOffIsKeptAsTheFailureItWas(_ kind: TransportKind, _ delivery: String) async throws {
        #if canImport(FoundationNetworking)
        if kind == .urlSession, delivery == "stream" { return }  // URLSession on Linux refuses streams
        #endif
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("broken.har")
        let server = ConveyServer(remote: try TestServers.faults(), configuration: ServerConfiguration(echoSink: { _ in }))
        server.transport = kind.make()
        let task = Get(server: server, path: "short-body")
        /// Runs the task as `delivery` and returns what it threw.
        func broken() async -> (any Error)? {
            do {
                if delivery == "file" {
                    _ = try await task.download(to: scratch.file("body.bin"))
                } else {
                    for try await _ in try await task.stream().payload {}
                }
                return nil
            } catch {
                return error
            }
        }

        let live = await (try HARFixtures(file: file, mode: .capture)).scope { await broken() }
        guard case ConveyError.transport = try #require(live) else {
            Issue.record("expected a transport failure, got \(String(describing: live))")
            return
        }
        let entry = try #require(try HARText.entries(of: file).first)
        let convey = try #require(entry["_convey"] as? [String: Any])
        let failure = try #require(convey["failure"] as? [String: Any])
        #expect(failure["kind"] as? String != nil)
        let content = try #require((entry["response"] as? [String: Any])?["content"] as? [String: Any])
        #expect(content["size"] as? Int == 500)

        let replayed = await (try HARFixtures(file: file)).scope { await broken() }
        guard case ConveyError.transport = try #require(replayed) else {
            Issue.record("a replay of a broken body ended \(String(describing: replayed))")
            return
        }
    }
}
