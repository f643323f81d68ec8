import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The runner skips a hook only once its default was seen running for that very task type
/// (`KnownHooks`, learnt through `HookProbe`): every hook a task or server overrides is called on
/// every run, before and after the runner learnt the type; a task with only defaults has them
/// learnt and skipped without any change in what its runs do; and a hook of another task type,
/// called from inside a hook, is never taken for the outer type's default.
@Suite("Hook coverage")
@ConveyActor
struct HookCoverageTests {
    /// `/ok` answers "hello"; `/broken` answers 500 "broken".
    private static func origin() -> StubOrigin {
        StubOrigin { request, _ in
            request.url.path == "/broken" ? (500, [:], "broken") : (200, [:], "hello")
        }
    }

    /// A server with `origin`'s transport, a retry waiter that does not sleep, and the policy given.
    private static func configure(_ server: ConveyServer, origin: StubOrigin, waiter: RecordingRetryWaiter,
                                  retryPolicy: RetryPolicy? = nil) -> ConveyServer {
        server.transport = origin.transport
        server.configuration.retryWaiter = waiter
        server.configuration.retryPolicy = retryPolicy
        return server
    }

    // MARK: - Every overridden hook

    /// A task that overrides every hook the runner may skip, and logs each call.
    private struct EveryHook: ServerTask {
        let server: ConveyServer
        let log: EventLog
        let path: String

        func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
            log.add("willSendRequest")
            return request
        }
        func didReceiveResponse(response: ResponseHead, data: Data) async throws { log.add("didReceiveResponse \(response.statusCode)") }
        func echoStyle(for data: Data?) -> TaskEchoStyle {
            log.add("echoStyle(for: \(data?.count ?? -1) bytes)")
            return .none
        }
        func didFinish(with response: ServerResponse<Data>) async { log.add("didFinish \(response.payload.count) bytes") }
        func didSucceed(with response: ServerResponse<Data>) async { log.add("didSucceed \(response.statusCode)") }
        func didFail(with error: any Error) async { log.add("didFail \((error as? HTTPError)?.statusCode ?? 0)") }
        /// One retry, at once; then give up.
        func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? {
            log.add("retryInterval \(count)")
            return count < 2 ? 0 : nil
        }
    }

    /// A server that overrides `didFinish(task:response:error:)`, calling `super` first when asked.
    private final class FinishingServer: ConveyServer {
        let log: EventLog
        let callsSuper: Bool

        init(remote: Remote, log: EventLog, callsSuper: Bool) {
            self.log = log
            self.callsSuper = callsSuper
            super.init(remote: remote, configuration: ServerConfiguration(echoSink: { _ in }))
        }

        override func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async {
            if callsSuper { await super.didFinish(task: task, response: response, error: error) }
            log.add("server.didFinish \(response?.statusCode ?? 0) \(error == nil ? "no error" : "error")")
        }
    }

    /// What the contract calls on a success of `EveryHook`, in order.
    private static let success = ["willSendRequest", "didReceiveResponse 200", "echoStyle(for: 5 bytes)", "didFinish 5 bytes",
                                  "didSucceed 200", "server.didFinish 200 no error"]
    /// What it calls on a 500, retried once: each attempt asks `retryInterval` before it is echoed.
    private static let failure = ["willSendRequest", "didReceiveResponse 500", "retryInterval 1", "echoStyle(for: 6 bytes)",
                                  "willSendRequest", "didReceiveResponse 500", "retryInterval 2", "echoStyle(for: 6 bytes)",
                                  "didFail 500", "server.didFinish 500 error"]

    @Test(arguments: [false, true])
    func everyOverriddenHookRunsOnEveryRunAlsoOnceTheTypeIsKnown(serverCallsSuper: Bool) async throws {
        let log = EventLog()
        let origin = Self.origin()
        let waiter = RecordingRetryWaiter()
        let remote = try #require(Remote(name: "stub", string: "https://stub.example"))
        let server = Self.configure(FinishingServer(remote: remote, log: log, callsSuper: serverCallsSuper), origin: origin, waiter: waiter)
        let outcomes = [true, false, true, false, true, true, false]
        for (run, succeeds) in outcomes.enumerated() {
            let before = log.events.count
            let task = EveryHook(server: server, log: log, path: succeeds ? "ok" : "broken")
            if succeeds {
                #expect(try await task.download().payload == Data("hello".utf8))
            } else {
                let error = await #expect(throws: HTTPError.self) { try await task.download() }
                #expect(error?.statusCode == 500)
            }
            #expect(Array(log.events.dropFirst(before)) == (succeeds ? Self.success : Self.failure), "run \(run + 1)")
            // Nothing of this type is ever taken for a default.
            #expect(TaskHook.allCases.allSatisfy { KnownHooks.of(EveryHook.self).mustCall($0) })
        }
        #expect(origin.count == outcomes.reduce(0) { $0 + ($1 ? 1 : 2) })
        #expect(waiter.milliseconds == Array(repeating: 0, count: outcomes.count { !$0 }))
    }

    // MARK: - Only defaults

    private struct OnlyDefaults: ServerTask {
        let server: ConveyServer
        let path: String
    }

    @Test func aTaskWithOnlyDefaultsHasThemLearntAndSkippedWithTheSameOutcomes() async throws {
        let origin = Self.origin()
        let waiter = RecordingRetryWaiter()
        let policy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(20), jitter: 0)
        let server = Self.configure(try stubServer(origin.transport), origin: origin, waiter: waiter, retryPolicy: policy)
        #expect(TaskHook.allCases.allSatisfy { KnownHooks.of(OnlyDefaults.self).mustCall($0) })
        for round in 1...3 {
            let response = try await OnlyDefaults(server: server, path: "ok").download()
            #expect(response.stringResult == "hello")
            let error = await #expect(throws: HTTPError.self) { try await OnlyDefaults(server: server, path: "broken").download() }
            #expect(error?.statusCode == 500)
            // The default retryInterval, learnt and skipped, still applies the task's policy: two attempts.
            #expect(origin.requests.map(\.url.path) == Array(repeating: ["/ok", "/broken", "/broken"], count: round).flatMap { $0 })
            #expect(waiter.milliseconds == Array(repeating: 20, count: round))
            // After a success and a failure, every default has been seen running.
            #expect(TaskHook.allCases.allSatisfy { !KnownHooks.of(OnlyDefaults.self).mustCall($0) })
        }
    }

    // MARK: - Probe soundness

    /// A task with only defaults whose hooks another task calls directly.
    private struct CalledFromInside: ServerTask {
        let server: ConveyServer
        var path: String { "ok" }
    }

    /// A task with only defaults that another task runs from inside its hook.
    private struct RunFromInside: ServerTask {
        let server: ConveyServer
        var path: String { "ok" }
    }

    /// Each of its hooks logs, then calls the same hook of `CalledFromInside`, whose default reports
    /// itself under this task's probe; `didSucceed` also runs a whole `RunFromInside`.
    private struct CallingOthers: ServerTask {
        let server: ConveyServer
        let log: EventLog
        let path: String
        private var inner: CalledFromInside { CalledFromInside(server: server) }

        func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
            log.add("willSendRequest")
            return try await inner.willSendRequest(request: request)
        }
        func didReceiveResponse(response: ResponseHead, data: Data) async throws {
            log.add("didReceiveResponse")
            try await inner.didReceiveResponse(response: response, data: data)
        }
        func echoStyle(for data: Data?) -> TaskEchoStyle {
            log.add("echoStyle(for:)")
            return inner.echoStyle(for: data)
        }
        func didFinish(with response: ServerResponse<Data>) async {
            log.add("didFinish")
            await inner.didFinish(with: response)
        }
        func didSucceed(with response: ServerResponse<Data>) async {
            log.add("didSucceed")
            await inner.didSucceed(with: response)
            log.add("nested run: \((try? await RunFromInside(server: server).download().stringResult) ?? "failed")")
        }
        func didFail(with error: any Error) async {
            log.add("didFail")
            await inner.didFail(with: error)
        }
        func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? {
            log.add("retryInterval")
            return inner.retryInterval(afterError: error, count: count)
        }
    }

    @Test func anotherTasksDefaultCalledFromInsideAHookIsNotTakenForTheOuterTypesDefault() async throws {
        let log = EventLog()
        let origin = Self.origin()
        let server = Self.configure(try stubServer(origin.transport), origin: origin, waiter: RecordingRetryWaiter())
        for _ in 0..<3 {
            let before = log.events.count
            _ = try await CallingOthers(server: server, log: log, path: "ok").download()
            #expect(Array(log.events.dropFirst(before)) == ["willSendRequest", "didReceiveResponse", "echoStyle(for:)", "didFinish",
                                                            "didSucceed", "nested run: hello"])
            let failedAt = log.events.count
            await #expect(throws: HTTPError.self) { try await CallingOthers(server: server, log: log, path: "broken").download() }
            #expect(Array(log.events.dropFirst(failedAt)) == ["willSendRequest", "didReceiveResponse", "retryInterval", "echoStyle(for:)", "didFail"])
        }
        // The outer type's hooks are its own; the inner type's defaults never ran under a probe of
        // its own; the task run from inside a hook learnt its own defaults in its own run.
        #expect(TaskHook.allCases.allSatisfy { KnownHooks.of(CallingOthers.self).mustCall($0) })
        #expect(TaskHook.allCases.allSatisfy { KnownHooks.of(CalledFromInside.self).mustCall($0) })
        let nested = KnownHooks.of(RunFromInside.self)
        #expect([TaskHook.willSendRequest, .didReceiveResponse, .echoStyleForData, .didFinish, .didSucceed].allSatisfy { !nested.mustCall($0) })
    }
}
