import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A server whose token starts stale; refreshing it (slowly, to let 401s pile up) makes it valid.
final class TokenServer: ConveyServer {
    var token = "stale"
    var refreshes = 0
    var refreshSucceeds = true

    override func headers(for task: any DownloadingTask) async throws -> Headers {
        ["Authorization": "Bearer \(token)"]
    }

    override func refreshCredentials(after error: HTTPError) async throws -> Bool {
        refreshes += 1
        try await Task.sleep(for: .milliseconds(100))
        guard refreshSucceeds else { return false }
        token = "fresh"
        return true
    }
}

private struct Profile: ServerTask {
    let server: ConveyServer
    var path: String { "profile" }
}

@Suite("Credential refresh")
@ConveyActor
struct CredentialRefreshTests {
    let seen = RequestLog()

    /// Answers 200 to the fresh token and 401 to anything else (or always 401).
    func server(alwaysUnauthorized: Bool = false) throws -> TokenServer {
        let remote = try #require(Remote(name: "stub", string: "https://stub.example"))
        let server = TokenServer(remote: remote, configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        server.transport = StubTransport { [seen] request in
            seen.add(request)
            let authorized = !alwaysUnauthorized && request.request.value(forHTTPHeaderField: "Authorization") == "Bearer fresh"
            return TransportResponse(url: request.request.url, statusCode: authorized ? 200 : 401,
                                         body: Data((authorized ? "me" : "unauthorized").utf8))
        }
        return server
    }

    @Test func unauthorizedThenRefreshThenSuccess() async throws {
        let server = try server()
        let response = try await Profile(server: server).download()
        #expect(response.stringResult == "me")
        #expect(response.attemptNumber == 2)
        #expect(server.refreshes == 1)
        #expect(seen.requests.map { $0.request.value(forHTTPHeaderField: "Authorization") } == ["Bearer stale", "Bearer fresh"])
    }

    @Test func concurrentUnauthorizedTasksShareOneRefresh() async throws {
        let server = try server()
        let results = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<8 { group.addTask { try await Profile(server: server).download().stringResult } }
            var results: [String?] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(results == Array(repeating: "me", count: 8))
        #expect(server.refreshes == 1)
        #expect(seen.requests.count == 16)
    }

    @Test func failedRefreshEndsEveryWaitingTaskAsUnauthorized() async throws {
        let server = try server()
        server.refreshSucceeds = false
        let errors = await withTaskGroup(of: (any Error)?.self) { group in
            for _ in 0..<4 { group.addTask { await Task { try await Profile(server: server).download() }.result.failure } }
            var errors: [(any Error)?] = []
            for await error in group { errors.append(error) }
            return errors
        }
        #expect(errors.allSatisfy { ($0 as? HTTPError)?.clientError == .unauthorized })
        #expect(server.refreshes == 1)
        #expect(seen.requests.count == 4)
    }

    @Test func secondUnauthorizedAfterARefreshIsFinal() async throws {
        let server = try server(alwaysUnauthorized: true)
        let error = await #expect(throws: HTTPError.self) { try await Profile(server: server).download() }
        #expect(error?.isUnauthorized == true)
        #expect(server.refreshes == 1)
        #expect(seen.requests.count == 2)
    }

    @Test func serversWithoutRefreshFailAtTheFirst401() async throws {
        let remote = try #require(Remote(name: "stub", string: "https://stub.example"))
        let plain = ConveyServer(remote: remote, configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        plain.transport = StubTransport.answering(status: 401, seen: seen)
        await #expect(throws: HTTPError.self) { try await Profile(server: plain).download() }
        #expect(seen.requests.count == 1)
    }

    @Test(.timeLimit(.minutes(5))) func a401ForACredentialAnotherRefreshReplacedRetriesWithTheNewOneAndRefreshesNoMore() async throws {
        let remote = try #require(Remote(name: "stub", string: "https://stub.example"))
        let server = TokenServer(remote: remote, configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        let held = ExchangeProbe()
        let release = AsyncStream<Void>.makeStream()
        server.transport = StubTransport { [seen] request in
            seen.add(request)
            let authorized = request.request.value(forHTTPHeaderField: "Authorization") == "Bearer fresh"
            if !authorized, request.request.url.path() == "/late" {
                // The late request went out with the stale token; its 401 comes after the other task's refresh.
                held.markStarted()
                for await _ in release.stream { break }
            }
            return TransportResponse(url: request.request.url, statusCode: authorized ? 200 : 401, body: Data((authorized ? "me" : "no").utf8))
        }
        struct Late: ServerTask {
            let server: ConveyServer
            var path: String { "late" }
        }
        let late = Task { try await Late(server: server).download() }
        await held.waitForStart()
        let early = try await Profile(server: server).download()
        #expect(early.stringResult == "me")
        #expect(server.refreshes == 1)
        release.continuation.yield()
        let response = try await late.value
        #expect(response.stringResult == "me")
        #expect(response.attemptNumber == 2)
        #expect(server.refreshes == 1)
        let lateRequests = seen.requests.filter { $0.request.url.path() == "/late" }
        #expect(lateRequests.map { $0.request.value(forHTTPHeaderField: "Authorization") } == ["Bearer stale", "Bearer fresh"])
    }
}
