import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Convey

/// `didReceiveResponse` is called on every run of a task that has one, and skipped (no
/// `HTTPURLResponse` built) for task types that keep the default.
@Suite("Response hook")
@ConveyActor
struct ResponseHookTests {
    private struct Plain: DownloadingTask {
        let server: ConveyServer
        var path: String { "plain" }
        var echoStyle: TaskEchoStyle { .none }
    }

    private struct Watching: DownloadingTask {
        let server: ConveyServer
        let log: EventLog
        var path: String { "watching" }
        var echoStyle: TaskEchoStyle { .none }
        func didReceiveResponse(response: HTTPURLResponse, data: Data) async throws {
            log.add("\(response.statusCode) \(response.value(forHTTPHeaderField: "X-Seen") ?? "-")")
        }
    }

    @Test func aTaskWithTheDefaultHookIsLearntOnItsFirstRun() async throws {
        let server = try stubServer(.answering(status: 200))
        #expect(!ResponseHook.typesWithDefaultHook.contains(ObjectIdentifier(Plain.self)))
        try await Plain(server: server).send()
        #expect(ResponseHook.typesWithDefaultHook.contains(ObjectIdentifier(Plain.self)))
    }

    @Test func aTaskWithItsOwnHookGetsTheResponseOnEveryRun() async throws {
        let log = EventLog()
        let server = try stubServer(.answering(status: 200, headers: ["X-Seen": "yes"]))
        for _ in 0..<3 { try await Watching(server: server, log: log).send() }
        #expect(log.events == ["200 yes", "200 yes", "200 yes"])
        #expect(!ResponseHook.typesWithDefaultHook.contains(ObjectIdentifier(Watching.self)))
    }
}
