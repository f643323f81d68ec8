import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A fresh folder for one test's HAR files, removed by `remove()`.
struct HARScratch {
    let url = FileManager.default.temporaryDirectory.appending(path: "convey-har-\(UUID().uuidString)", directoryHint: .isDirectory)

    init() throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { url.appending(path: name) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// HAR documents for tests, built from entries written as dictionaries.
enum HARText {
    /// An entry answering `method url` with `status`, `headers` and a text `body`.
    static func entry(_ method: String = "GET", _ url: String, status: Int = 200, headers: [(String, String)] = [("Content-Type", "application/json")],
                      body: String? = nil, base64Body: String? = nil, requestBody: String? = nil) -> [String: Any] {
        var content: [String: Any] = ["size": (body ?? base64Body ?? "").utf8.count, "mimeType": headers.first { $0.0 == "Content-Type" }?.1 ?? ""]
        if let body { content["text"] = body }
        if let base64Body {
            content["text"] = base64Body
            content["encoding"] = "base64"
        }
        var request: [String: Any] = ["method": method, "url": url, "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                                      "queryString": [], "headersSize": -1, "bodySize": requestBody?.utf8.count ?? 0]
        if let requestBody { request["postData"] = ["mimeType": "application/json", "text": requestBody] }
        return [
            "startedDateTime": "2025-01-01T00:00:00.000Z", "time": 1,
            "request": request,
            "response": ["status": status, "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
                         "headers": headers.map { ["name": $0.0, "value": $0.1] }, "content": content,
                         "redirectURL": "", "headersSize": -1, "bodySize": -1],
            "cache": [:], "timings": ["send": 0, "wait": 1, "receive": 0],
        ]
    }

    /// A whole document holding `entries`.
    static func document(_ entries: [[String: Any]]) throws -> Data {
        let log: [String: Any] = ["log": ["version": "1.2", "creator": ["name": "tests", "version": "1"], "entries": entries]]
        return try JSONSerialization.data(withJSONObject: log, options: [.prettyPrinted, .sortedKeys])
    }

    /// Writes a document holding `entries` to `file`.
    static func write(_ entries: [[String: Any]], to file: URL) throws {
        try document(entries).write(to: file)
    }

    /// The entries of the HAR file at `file`, as dictionaries.
    static func entries(of file: URL) throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: file))
        let log = try #require((object as? [String: Any])?["log"] as? [String: Any])
        return try #require(log["entries"] as? [[String: Any]])
    }
}

/// A transport that fails the test when anything reaches it: replay must send nothing.
struct NoNetworkTransport: ConveyTransport {
    func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        Issue.record("the network was used for \(request.request.method) \(request.request.url)")
        throw URLError(.notConnectedToInternet)
    }
}

/// A server at `base` whose own transport must never be used.
@ConveyActor
func offlineServer(base: String = "https://api.example", configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> ConveyServer {
    var configuration = ServerConfiguration(echoSink: { _ in })
    configure(&configuration)
    let server = ConveyServer(remote: Remote(name: "offline", url: try #require(URL(string: base))), configuration: configuration)
    server.transport = NoNetworkTransport()
    return server
}

/// `scripts/har-validate`: the HAR 1.2 JSON Schema (vendored in Tests/Fixtures/har-schema),
/// checked with `jsonschema` from the Python `scripts/with-test-servers` exports as CONVEY_PYTHON.
enum HARValidator {
    static let python = ProcessInfo.processInfo.environment["CONVEY_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }
    /// The package's root folder, from this file's place in it.
    static let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// `Tests/Fixtures/har`: HAR files made by other tools.
    static let fixturesFolder = packageRoot.appending(path: "Tests/Fixtures/har")

    /// Validates `files`; the exit status and what the validator printed.
    static func validate(_ files: [URL]) throws -> (status: Int32, output: String) {
        #if os(Linux) || os(macOS)
        let python = try #require(python, "CONVEY_PYTHON is not set: run the suite with scripts/test")
        let process = Process()
        process.executableURL = URL(filePath: python)
        process.arguments = [packageRoot.appending(path: "scripts/har-validate").path(percentEncoded: false)]
            + files.map { $0.path(percentEncoded: false) }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
        #else
        throw HARValidatorUnavailable()
        #endif
    }

    /// Where no process can be started (iOS and the like), nothing validates.
    struct HARValidatorUnavailable: Error {}
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where the HAR validator is installed (scripts/test installs it).
    static var harValidator: Self {
        .enabled(if: HARValidator.python != nil || ProcessInfo.processInfo.environment["CONVEY_REQUIRE_SERVERS"] != nil,
                 "needs jsonschema in .venv: run scripts/test")
    }
}
