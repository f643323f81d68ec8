import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

// The app server of README.md and Docs/servers.md, exactly as documented (the test below
// checks that both documents still show this code).

// documented-subclass:begin
extension Remote {
    static let staging = Remote(name: "staging", url: URL(string: "https://staging.example.com")!, pathPrefix: "api/v2")
    static let production = Remote(name: "production", url: URL(string: "https://api.example.com")!, pathPrefix: "api/v2")
}

final class AppServer: ConveyServer {
    static let shared = AppServer()

    var token: String?
    private(set) var finishedRuns = 0

    init() {
        super.init(asDefault: true)
        remote = .production
        configuration.retryPolicy = .standard
    }

    override func headers(for task: any DownloadingTask) async throws -> Headers {
        var headers: Headers = ["X-Client": "my-app"]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        return headers
    }

    override func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async {
        // Called exactly once per task run, on success and on failure: a good place for metrics.
        finishedRuns += 1
    }
}

@ConveyActor func switchToStaging() {
    AppServer.shared.remote = .staging
}
// documented-subclass:end

/// The smallest subclass the issue asked for: an initializer of its own calling `init(asDefault:)`.
private final class MinimalServer: ConveyServer {
    init() { super.init(asDefault: false) }
}

extension DefaultServerSuites {
    @Suite("The documented server subclass")
    @ConveyActor
    struct SubclassExampleTests {
        private static let documentedCode: String? = {
            let source = try? String(contentsOf: URL(filePath: #filePath), encoding: .utf8)
            return source.flatMap { block(in: $0, from: "// documented-subclass:begin\n", to: "// documented-subclass:end") }
        }()

        private static func block(in text: String, from start: String, to end: String) -> String? {
            guard let lower = text.range(of: start)?.upperBound, let upper = text.range(of: end, range: lower..<text.endIndex)?.lowerBound
            else { return nil }
            return String(text[lower..<upper])
        }

        @Test(arguments: ["README.md", "Docs/servers.md"])
        func theDocumentsShowThisCode(document: String) throws {
            // Tests/ConveyTests/Core/Server/this file: five levels below the package's root.
            let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            let text = try String(contentsOf: root.appending(path: document), encoding: .utf8)
            let code = try #require(Self.documentedCode)
            let subclass = try #require(code.range(of: "final class AppServer")).lowerBound
            #expect(text.contains(code[subclass...]), "\(document) no longer shows the subclass this test compiles")
            if document == "README.md" { #expect(text.contains(code[..<subclass])) }
        }

        @Test func subclassesCallEitherDesignatedInitializer() {
            let minimal = MinimalServer()
            #expect(minimal.remote == nil)
            #expect(ConveyServer.default !== minimal)
        }

        @Test(.wire) func theSharedServerIsTheDefaultAndItsRemoteSwitchesAtRunTime() async throws {
            #expect(AppServer.shared.remote == .production)
            #expect(ConveyServer.default === AppServer.shared)
            switchToStaging()
            #expect(AppServer.shared.remote == .staging)

            // A second instance through the same `init()` takes over as the default.
            let server = AppServer()
            #expect(ConveyServer.default === server)
            #expect(server.configuration.retryPolicy == .standard)
            server.remote = try TestServers.httpbin(pathPrefix: "anything")
            server.token = "t-1"
            let response = try await FetchUserTask(userId: "7").download()
            let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: response.data)
            #expect(echo.url?.hasSuffix("/anything/users/7") == true)
            #expect(echo.headers["X-Client"] == "my-app")
            #expect(echo.headers["Authorization"] == "Bearer t-1")
            #expect(server.finishedRuns == 1)
        }
    }
}
