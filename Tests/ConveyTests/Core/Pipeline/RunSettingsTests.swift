import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A server whose credential a test changes between attempts.
final class RotatingTokenServer: ConveyServer {
    var token = "first-token"

    override func headers(for task: any DownloadingTask) async throws -> Headers {
        ["Authorization": "Bearer \(token)"]
    }
}

/// Runs something on `@ConveyActor` during a retry wait, then returns at once.
private final class ActingRetryWaiter: RetryWaiting {
    private let action: @ConveyActor @Sendable () -> Void

    init(_ action: @escaping @ConveyActor @Sendable () -> Void) { self.action = action }

    func wait(_ duration: Duration) async throws {
        await action()
    }
}

private struct Retried: DownloadingTask {
    let server: ConveyServer
    var path: String { "items/1" }
    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { count < 2 ? 0 : nil }
}

/// A task type no other test runs, so that its default `retryInterval` is not known yet when it runs.
private struct FirstOfItsType: DownloadingTask {
    let server: ConveyServer
    var path: String { "first" }
}

/// What a run reads once, when it starts, and what each attempt reads again.
@Suite("Run settings")
@ConveyActor
struct RunSettingsTests {
    @Test func aRetryGoesWhereTheRunStartedWithTheSettingsItStartedWith() async throws {
        let seen = RequestLog()
        let script = ScriptedTransport([.status(503), .status(200)])
        let server = RotatingTokenServer(remote: Remote(name: "first", url: try #require(URL(string: "https://first.example/v1"))),
                                         configuration: ServerConfiguration(userAgent: "first-agent", defaultHeaders: ["X-Client": "first"],
                                                                            echoSink: EchoCapture().sink))
        server.transport = StubTransport { request in
            seen.add(request)
            return try await script.transport.send(request)
        }
        let other = Remote(name: "second", url: try #require(URL(string: "https://second.example/v2")))
        server.configuration.retryWaiter = ActingRetryWaiter {
            server.remote = other
            server.configuration.userAgent = "second-agent"
            server.configuration.defaultHeaders = ["X-Client": "second"]
            server.token = "second-token"
        }
        try await Retried(server: server).send()
        let sent = seen.requests.map(\.request)
        #expect(sent.map(\.url.absoluteString) == ["https://first.example/v1/items/1", "https://first.example/v1/items/1"])
        #expect(sent.map { $0.fields["User-Agent"] } == ["first-agent", "first-agent"])
        #expect(sent.map { $0.fields["X-Client"] } == ["first", "first"])
        // Credentials are read again for each attempt.
        #expect(sent.map { $0.fields["Authorization"] } == ["Bearer first-token", "Bearer second-token"])

        try await Retried(server: server).send()
        #expect(seen.requests.last?.request.url.absoluteString == "https://second.example/v2/items/1")
    }

    @Test func theDefaultRetryIntervalFollowsThePolicyTheRunStartedWith() async throws {
        let script = ScriptedTransport([.status(503), .status(200)])
        let server = try stubServer(StubTransport { request in try await script.transport.send(request) }) {
            $0.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: .zero, jitter: 0)
            $0.retryWaiter = RecordingRetryWaiter()
        }
        let changer = StubTransport { request in
            // The policy changes after the run read it, before its first failure asks.
            await Task { @ConveyActor in server.configuration.retryPolicy = nil }.value
            return try await script.transport.send(request)
        }
        server.transport = changer
        let response = try await FirstOfItsType(server: server).download()
        #expect(response.attemptNumber == 2)
        #expect(script.requestCount == 2)
    }

    @Test(arguments: ["noRemote", "disabled", "invalidURL"])
    func aRunThatCannotStartIsNeverRetried(_ cause: String) async throws {
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen))
        switch cause {
        case "noRemote": server.remote = nil
        case "disabled": server.disabled = true
        default: break
        }
        let asked = Locked(0)
        struct Counting: DownloadingTask {
            let server: ConveyServer
            let asked: Locked<Int>
            let path: String
            func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? {
                asked.withLock { $0 += 1 }
                return 0
            }
        }
        await #expect(throws: ConveyError.self) { try await Counting(server: server, asked: asked, path: cause == "invalidURL" ? "../../etc" : "x").send() }
        #expect(asked.value == 0)
        #expect(seen.requests.isEmpty)
    }
}
