#if DEBUG
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// How often a run goes to `@ConveyActor`, counted by the runner's own probe (`ActorVisits`, debug
/// builds): once to plan the run and build its first attempt, and after that only for hooks the
/// task or its server really has. A first run of a task type learns which hooks are defaults, so
/// every count here is taken on a later run. Each test has task types of its own, since the probe
/// counts by type and tests run in parallel.
@Suite("Actor visits")
@ConveyActor
struct ActorVisitTests {
    private struct PlainSuccess: ServerTask {
        let server: ConveyServer
        var path: String { "plain" }
    }

    private struct PlainFailure: ServerTask {
        let server: ConveyServer
        var path: String { "plain" }
    }

    private struct PlainRetried: ServerTask {
        let server: ConveyServer
        var path: String { "plain" }
    }

    private struct PlainOnASubclass: ServerTask {
        let server: ConveyServer
        var path: String { "plain" }
    }

    private struct PlainOnAQuietSubclass: ServerTask {
        let server: ConveyServer
        var path: String { "plain" }
    }

    private struct WatchingResponses: ServerTask {
        let server: ConveyServer
        let log: EventLog
        var path: String { "watched" }
        func didReceiveResponse(response: ResponseHead, data: Data) async throws { log.add("didReceiveResponse \(response.statusCode)") }
    }

    private struct WatchingSuccess: ServerTask {
        let server: ConveyServer
        let log: EventLog
        var path: String { "watched" }
        func didSucceed(with response: ServerResponse<Data>) async { log.add("didSucceed \(response.statusCode)") }
    }

    /// An app's server that overrides none of the server's hooks.
    private final class QuietServer: ConveyServer {}

    /// A server whose `didFinish(task:response:error:)` is its own.
    private final class FinishingServer: ConveyServer {
        let log = EventLog()
        override func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async {
            log.add("server.didFinish")
        }
    }

    @Test func aPlainRunOfATaskWithNoHookVisitsTheActorOnceOnceItsHooksAreKnown() async throws {
        let server = try stubServer(.answering(body: "plain"))
        ActorVisits.watch(PlainSuccess.self)
        // The first run calls every hook under the probe: each default reports itself.
        #expect(try await PlainSuccess(server: server).download().stringResult == "plain")
        #expect(ActorVisits.entries(of: PlainSuccess.self) == [.start, .build, .didReceiveResponse, .succeeded])
        let known = KnownHooks.of(PlainSuccess.self)
        #expect([TaskHook.willSendRequest, .didReceiveResponse, .didFinish, .didSucceed, .echoStyleForData].allSatisfy { !known.mustCall($0) })

        for _ in 0..<3 {
            ActorVisits.watch(PlainSuccess.self)
            #expect(try await PlainSuccess(server: server).download().stringResult == "plain")
            #expect(ActorVisits.entries(of: PlainSuccess.self) == [.start, .build])
            #expect(ActorVisits.visits(of: PlainSuccess.self) == 1)
        }
    }

    @Test func aFailedPlainRunVisitsTheActorOnceOnceItsHooksAreKnown() async throws {
        let server = try stubServer(.answering(status: 500, body: "broken"))
        ActorVisits.watch(PlainFailure.self)
        await #expect(throws: HTTPError.self) { try await PlainFailure(server: server).download() }
        #expect(ActorVisits.entries(of: PlainFailure.self) == [.start, .build, .didReceiveResponse, .retryInterval, .failed])
        let known = KnownHooks.of(PlainFailure.self)
        #expect([TaskHook.didReceiveResponse, .retryInterval, .didFail].allSatisfy { !known.mustCall($0) })

        ActorVisits.watch(PlainFailure.self)
        let error = await #expect(throws: HTTPError.self) { try await PlainFailure(server: server).download() }
        #expect(error?.statusCode == 500)
        #expect(ActorVisits.entries(of: PlainFailure.self) == [.start, .build])
        #expect(ActorVisits.visits(of: PlainFailure.self) == 1)
    }

    @Test func eachRetryBuildsItsAttemptInOneMoreVisit() async throws {
        let script = ScriptedTransport([.status(503), .status(200, body: "learnt"), .status(503), .status(200, body: "counted")])
        let waiter = RecordingRetryWaiter()
        let server = try stubServer(script.transport) {
            $0.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(10), jitter: 0)
            $0.retryWaiter = waiter
        }
        #expect(try await PlainRetried(server: server).download().stringResult == "learnt")
        ActorVisits.watch(PlainRetried.self)
        // The default retryInterval is known: the server's policy is read off the actor.
        #expect(try await PlainRetried(server: server).download().stringResult == "counted")
        #expect(ActorVisits.entries(of: PlainRetried.self) == [.start, .build, .build])
        #expect(ActorVisits.visits(of: PlainRetried.self) == 2)
        #expect(script.requestCount == 4)
        #expect(waiter.milliseconds == [10, 10])
    }

    @Test func aTaskWithItsOwnDidReceiveResponseVisitsTheActorOnceMore() async throws {
        let log = EventLog()
        let server = try stubServer(.answering(body: "seen"))
        _ = try await WatchingResponses(server: server, log: log).download()
        for _ in 0..<3 {
            ActorVisits.watch(WatchingResponses.self)
            _ = try await WatchingResponses(server: server, log: log).download()
            #expect(ActorVisits.entries(of: WatchingResponses.self) == [.start, .build, .didReceiveResponse])
            #expect(ActorVisits.visits(of: WatchingResponses.self) == 2)
        }
        #expect(log.events == Array(repeating: "didReceiveResponse 200", count: 4))
    }

    @Test func aTaskWithItsOwnDidSucceedVisitsTheActorOnceMore() async throws {
        let log = EventLog()
        let server = try stubServer(.answering(body: "done"))
        _ = try await WatchingSuccess(server: server, log: log).download()
        ActorVisits.watch(WatchingSuccess.self)
        _ = try await WatchingSuccess(server: server, log: log).download()
        #expect(ActorVisits.entries(of: WatchingSuccess.self) == [.start, .build, .succeeded])
        #expect(ActorVisits.visits(of: WatchingSuccess.self) == 2)
        #expect(log.events == ["didSucceed 200", "didSucceed 200"])
    }

    @Test func aServerWithItsOwnDidFinishHasItCalledOnTheActorAfterTheResponse() async throws {
        let remote = try #require(Remote(name: "stub", string: "https://stub.example"))
        let server = FinishingServer(remote: remote, configuration: ServerConfiguration(echoSink: { _ in }))
        server.transport = StubTransport.answering(body: "finished")
        _ = try await PlainOnASubclass(server: server).download()
        ActorVisits.watch(PlainOnASubclass.self)
        _ = try await PlainOnASubclass(server: server).download()
        // The override is the server's own code, isolated to the actor: its one visit is its own.
        #expect(ActorVisits.entries(of: PlainOnASubclass.self) == [.start, .build])
        #expect(server.log.events == ["server.didFinish", "server.didFinish"])
    }

    /// A subclass of `ConveyServer` is how an app uses Convey: one that overrides no hook costs a
    /// plain run one visit, as a plain `ConveyServer` does.
    @Test func aSubclassThatOverridesNoHookCostsOneVisit() async throws {
        let remote = try #require(Remote(name: "stub", string: "https://stub.example"))
        let server = QuietServer(remote: remote, configuration: ServerConfiguration(echoSink: { _ in }))
        server.transport = StubTransport.answering(body: "quiet")
        _ = try await PlainOnAQuietSubclass(server: server).download()
        for _ in 0..<3 {
            ActorVisits.watch(PlainOnAQuietSubclass.self)
            _ = try await PlainOnAQuietSubclass(server: server).download()
            #expect(ActorVisits.entries(of: PlainOnAQuietSubclass.self) == [.start, .build])
            #expect(ActorVisits.visits(of: PlainOnAQuietSubclass.self) == 1)
        }
    }
}
#endif
