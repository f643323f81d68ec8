import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A task path never climbs out of the remote's base path and prefix.
@ConveyActor
struct RemotePathTests {
    private struct Fetch: ServerTask {
        let server: ConveyServer
        let path: String
    }

    @Test(arguments: ["../admin", "a/../../admin", "./../x", "%2e%2E/admin", "a/%2E%2E/%2e%2e/admin", "/../x?q=1", "%2e./x", ".%2E/x"])
    func pathsThatClimbOutAreDetected(_ path: String) {
        #expect(Remote.climbsOutOfPrefix(path))
    }

    @Test(arguments: ["users/1", "a/../b", "./a", "a/b/../../c", "x?next=../../admin", "..a/b", "a..", "", ".../x", "%2e%2e%2e/x", "%2f../x", "%2/../b"])
    func pathsThatStayInsideAreNot(_ path: String) {
        #expect(!Remote.climbsOutOfPrefix(path))
    }

    @Test func aClimbingPathFailsBeforeAnythingIsSent() async throws {
        let log = RequestLog()
        let server = try stubServer(.answering(seen: log))
        server.remote = Remote(name: "api", url: try #require(URL(string: "https://api.example")), pathPrefix: "v2")
        let error = await #expect(throws: ConveyError.self) { try await Fetch(server: server, path: "../admin").send() }
        guard case .invalidURL(let text, let reason) = error else { Issue.record("expected invalidURL"); return }
        #expect(text == "../admin")
        #expect(reason.contains("climb out"))
        #expect(log.requests.isEmpty)
    }

    @Test func aPathThatStaysInsideIsSentAsWritten() async throws {
        let log = RequestLog()
        let server = try stubServer(.answering(seen: log))
        server.remote = Remote(name: "api", url: try #require(URL(string: "https://api.example")), pathPrefix: "v2")
        _ = try await Fetch(server: server, path: "a/../b").send()
        #expect(log.last?.request.url.absoluteString == "https://api.example/v2/a/../b")
    }
}
