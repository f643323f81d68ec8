import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A task that retries by policy and logs its hooks.
private struct RetryingTask: DownloadingTask {
    typealias DownloadPayload = Data
    let server: ConveyServer
    let log: EventLog
    var method: HTTPMethod = .get
    var retryPolicy: RetryPolicy? = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10), jitter: 0)
    var configuration: TaskConfiguration?
    var path: String { "flaky" }

    func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
        log.add("willSend")
        return request
    }
    func didReceiveResponse(response: ResponseHead, data: Data) async throws { log.add("received \(response.statusCode)") }
    func didFail(with error: any Error) async { log.add(error.isCancellation ? "didFail cancelled" : "didFail") }
    func didFinish(with response: ServerResponse<Data>) async { log.add("didFinish attempt \(response.attemptNumber)") }
}

/// A task with a hand-written retry schedule.
private struct CountingTask: ServerTask {
    let server: ConveyServer
    let counts: EventLog
    var path: String { "flaky" }
    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? {
        counts.add("asked \(count) after \((error as? HTTPError)?.statusCode ?? 0)")
        return count < 4 ? 0 : nil
    }
}

@Suite("Retries")
@ConveyActor
struct RetryTests {
    let log = EventLog()
    let sink = EchoCapture()

    func server(_ script: ScriptedTransport) throws -> ConveyServer {
        try stubServer(script.transport) { [sink] in
            $0.echoSink = sink.sink
            $0.defaultEchoStyle = .consoleMinimum
        }
    }

    @Test func twoUnavailableAnswersThenSuccessRunsThreeAttemptsWithHooksAndEchoEach() async throws {
        let script = ScriptedTransport([.status(503), .status(503), .status(200, body: "ok")])
        let response = try await RetryingTask(server: server(script), log: log).download()
        #expect(response.attemptNumber == 3)
        #expect(response.stringResult == "ok")
        #expect(script.requestCount == 3)
        #expect(log.events == ["willSend", "received 503", "willSend", "received 503", "willSend", "received 200", "didFinish attempt 3"])
        let lines = sink.text.split(separator: "\n")
        #expect(lines.count == 3)
        let (first, second, third) = (try lines.required(0), try lines.required(1), try lines.required(2))
        #expect(first.contains("→ 503") && !first.contains("attempt"))
        #expect(second.contains("→ 503") && second.contains("attempt 2"))
        #expect(third.contains("→ 200") && third.contains("attempt 3"))
    }

    @Test func retriesStopAtMaxAttemptsWithTheLastError() async throws {
        let script = ScriptedTransport([.status(500)])
        let error = await #expect(throws: HTTPError.self) { try await RetryingTask(server: server(script), log: log).download() }
        #expect(error?.statusCode == 500)
        #expect(script.requestCount == 3)
        #expect(log.events.filter { $0 == "didFail" }.count == 1)
    }

    @Test func retryIntervalIsAskedAfterEveryFailedAttemptWithItsCount() async throws {
        let counts = EventLog()
        let script = ScriptedTransport([.status(502), .status(429), .status(500), .status(503)])
        await #expect(throws: HTTPError.self) { try await CountingTask(server: server(script), counts: counts).download() }
        #expect(counts.events == ["asked 1 after 502", "asked 2 after 429", "asked 3 after 500", "asked 4 after 503"])
        #expect(script.requestCount == 4)
    }

    @Test func transportFailuresAreRetriedToo() async throws {
        let script = ScriptedTransport([.fail(.networkConnectionLost), .status(200)])
        let response = try await RetryingTask(server: server(script), log: log).download()
        #expect(response.attemptNumber == 2)
    }

    @Test func postIsNotRetriedByDefault() async throws {
        let script = ScriptedTransport([.status(503), .status(200)])
        await #expect(throws: HTTPError.self) { try await RetryingTask(server: server(script), log: log, method: .post).download() }
        #expect(script.requestCount == 1)
    }

    @Test func retryAfterOn429SetsTheWait() async throws {
        let script = ScriptedTransport([.status(429, headers: ["Retry-After": "7"]), .status(200)])
        let waits = RecordingRetryWaiter()
        let server = try server(script)
        server.configuration.retryWaiter = waits
        let response = try await RetryingTask(server: server, log: log).download()
        #expect(response.attemptNumber == 2)
        #expect(waits.milliseconds == [7000])
    }

    @Test func waitsFollowThePolicysBackoff() async throws {
        let script = ScriptedTransport([.status(503), .status(503), .status(503), .status(200)])
        let waits = RecordingRetryWaiter()
        let server = try server(script)
        server.configuration.retryWaiter = waits
        var task = RetryingTask(server: server, log: log)
        task.retryPolicy = RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(200), maxDelay: .milliseconds(500), jitter: 0)
        #expect(try await task.download().attemptNumber == 4)
        #expect(waits.milliseconds == [200, 400, 500])
    }

    // The wait never ends by itself: only cancellation can end the run (the time limit catches a hang).
    @Test(.timeLimit(.minutes(5))) func cancellingDuringTheWaitEndsTheTaskAsCancelled() async throws {
        let script = ScriptedTransport([.status(503)])
        let waiter = HeldRetryWaiter()
        let server = try server(script)
        server.configuration.retryWaiter = waiter
        var task = RetryingTask(server: server, log: log)
        task.retryPolicy = RetryPolicy(maxAttempts: 5, baseDelay: .seconds(30), jitter: 0)
        let run = Task { try await task.download() }
        await waiter.waitingStarted()
        run.cancel()
        let result = await run.result
        #expect(result.failure?.isCancellation == true)
        #expect(waiter.requested == [.seconds(30)])
        #expect(log.events.last == "didFail cancelled")
        #expect(script.requestCount == 1)
    }

    @Test func totalTimeoutEndsAHangingAttemptAsATimeout() async throws {
        let script = ScriptedTransport([.hang])
        var task = RetryingTask(server: try server(script), log: log)
        task.configuration = TaskConfiguration(totalTimeout: .milliseconds(300))
        // The attempt hangs for 60 s: only the total timeout can end it as a total timeout.
        let error = await #expect(throws: ConveyError.self) { try await task.download() }
        guard let failure = error?.timeout else { Issue.record("expected a timeout, got \(String(describing: error))"); return }
        #expect(failure.isTotal == true)
        #expect(failure.limit == .milliseconds(300))
        #expect(log.events.last == "didFail")
    }

    @Test func totalTimeoutEndsTheRetriesBeforeAWaitThatWouldOverrunIt() async throws {
        let clock = ManualRunClock()
        let script = ScriptedTransport([.status(503)])
        var task = RetryingTask(server: try server(script), log: log)
        task.server.configuration.runClock = clock
        task.server.configuration.retryWaiter = ClockAdvancingWaiter(clock: clock)
        task.retryPolicy = RetryPolicy(maxAttempts: 1000, baseDelay: .milliseconds(100), maxDelay: .milliseconds(100), jitter: 0)
        task.configuration = TaskConfiguration(totalTimeout: .milliseconds(700))
        let result = await Task { try await task.download() }.result
        // Attempts at 0, 100, … 600 ms; a wait from 600 ms would end at the deadline, so the run
        // ends there with the last 503 instead of waiting for the timeout.
        #expect((result.failure as? HTTPError)?.statusCode == 503)
        #expect(script.requestCount == 7)
        #expect(log.events.last == "didFail")
    }

    @Test func failAllRequestsSendsNothing() async throws {
        let script = ScriptedTransport([.status(200)])
        let server = try server(script)
        server.configuration.failsAllRequests = true
        let error = await #expect(throws: ConveyError.self) { try await RetryingTask(server: server, log: log).download() }
        guard case .requestsDisabledForDebugging = error else { Issue.record("expected requestsDisabledForDebugging"); return }
        #expect(script.requestCount == 0)
        #expect(error?.displayMessage == "Network requests are disabled for debugging.")
    }

    @Test func onlyTheExactLaunchArgumentFailsAllRequests() {
        #expect(ServerConfiguration.failsAllRequests(launchArguments: ["app", "-fail-all-requests"]))
        #expect(!ServerConfiguration.failsAllRequests(launchArguments: ["app"]))
        #expect(!ServerConfiguration.failsAllRequests(launchArguments: ["app", "--fail-all-requests", "-fail-all-requests=1"]))
        #expect(!ServerConfiguration.failsAllRequests(launchArguments: ["-fail-all-requests"]), "the executable's own name is no argument")
    }
}

/// Retry waits that move a manual clock instead of sleeping, so deadline rules meet waits exactly.
private final class ClockAdvancingWaiter: RetryWaiting {
    let clock: ManualRunClock
    init(clock: ManualRunClock) { self.clock = clock }
    func wait(_ duration: Duration) async throws { clock.advance(by: duration) }
}
