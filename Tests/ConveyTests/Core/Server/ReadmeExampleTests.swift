import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

// The README's example types, verbatim, run against a stub that answers like the real API.

private struct Repo: Decodable, Sendable {
    let id: Int
    let name: String
}

private struct FetchRepos: DownloadingTask {
    typealias DownloadPayload = [Repo]
    let user: String
    var path: String { "users/\(user)/repos" }
    var queryParameters: [String: String]? { ["per_page": "5"] }
    var server: ConveyServer { ReadmeServer.server }
}

@ConveyActor
private enum ReadmeServer {
    static let seen = RequestLog()
    static let server: ConveyServer = {
        let server = ConveyServer(remote: Remote(name: "github", url: URL(fileURLWithPath: "/")),
                                  configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        server.remote = Remote(name: "github", string: "https://api.github.com")
        server.transport = StubTransport.answering(body: #"[{"id": 1, "name": "swift"}, {"id": 2, "name": "swift-testing"}]"#, seen: seen)
        return server
    }()
}

@Suite("README example")
struct ReadmeExampleTests {
    @Test func exampleTaskBuildsTheURLAndDecodesTheList() async throws {
        let response = try await FetchRepos(user: "swiftlang").download()
        #expect(response.payload.map(\.name) == ["swift", "swift-testing"])
        #expect(await ReadmeServer.seen.last?.request.url.absoluteString == "https://api.github.com/users/swiftlang/repos?per_page=5")
    }
}
