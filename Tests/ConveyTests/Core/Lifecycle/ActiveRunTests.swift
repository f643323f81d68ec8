import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct HeldTask: ServerTask {
    let server: ConveyServer
    var sessionTag: String?
    var configuration: TaskConfiguration?
    let log: EventLog
    var path: String { "held" }
    func didFail(with error: any Error) async { log.add("didFail") }
}

/// A task whose every failure asks for a 30 s wait before the next attempt.
private struct RetriedTask: ServerTask {
    let server: ConveyServer
    var sessionTag: String?
    var configuration: TaskConfiguration?
    var path: String { "retried" }
    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { 30 }
}

/// What a stub transport's exchange went through, for tests that must know it started and how it ended.
final class ExchangeProbe: @unchecked Sendable {
    let started: AsyncStream<Void>
    private let startedContinuation: AsyncStream<Void>.Continuation
    let ended = EventLog()

    init() { (started, startedContinuation) = AsyncStream.makeStream(of: Void.self) }

    func markStarted() { startedContinuation.yield() }

    /// Returns once an exchange has started.
    func waitForStart() async {
        for await _ in started { return }
    }
}

/// Holds waiters until it opens; cancelling a waiter does not release it.
private final class Latch: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        await withCheckedContinuation { continuation in
            let openNow = lock.withLock {
                if !isOpen { waiters.append(continuation) }
                return isOpen
            }
            if openNow { continuation.resume() }
        }
    }

    func open() {
        let released = lock.withLock {
            isOpen = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in released { waiter.resume() }
    }
}

/// A run wired to its machine: the deadline alarm, cancellation by tag and the caller's task reach
/// the attempt's exchange as Swift task cancellation. The deadline runs on a clock the test moves.
@Suite("Lifecycle: active runs")
@ConveyActor
struct LifecycleActiveRunTests {
    let log = EventLog()
    let probe = ExchangeProbe()
    let clock = ManualRunClock()

    /// A server whose exchanges never answer: they end only when their task is cancelled.
    func hangingServer() throws -> ConveyServer {
        try stubServer(StubTransport { [probe] _ in
            probe.markStarted()
            let never = AsyncStream<Void> { _ in }
            for await _ in never {}
            probe.ended.add(Task.isCancelled ? "cancelled" : "ended")
            throw CancellationError()
        }) { [clock] in $0.runClock = clock }
    }

    @Test(.timeLimit(.minutes(5))) func theDeadlineEndsAHangingExchangeAsATotalTimeout() async throws {
        let server = try hangingServer()
        let task = HeldTask(server: server, configuration: TaskConfiguration(totalTimeout: .seconds(30)), log: log)
        let run = Task { try await task.download() }
        await probe.waitForStart()
        clock.advance(by: .seconds(29))
        clock.advance(by: .seconds(1))
        let error = await run.result.failure
        #expect(totalTimeout(error)?.limit == .seconds(30))
        #expect(totalTimeout(error)?.url?.absoluteString == "https://stub.example/held")
        #expect(probe.ended.events == ["cancelled"])
        #expect(log.events == ["didFail"])
    }

    @Test(.timeLimit(.minutes(5))) func cancellingByTagCancelsTheExchangeTaskNotTheCaller() async throws {
        let server = try hangingServer()
        let tag = "held-\(UUID())"
        let task = HeldTask(server: server, sessionTag: tag, log: log)
        let caller = Task { () -> (Bool, Bool) in
            do {
                _ = try await task.download()
                return (false, Task.isCancelled)
            } catch {
                return (isCancelled(error), Task.isCancelled)
            }
        }
        await probe.waitForStart()
        #expect(ConveySession.cancel(sessionWithTag: tag) == 1)
        let (runCancelled, callerCancelled) = await caller.value
        #expect(runCancelled)
        #expect(!callerCancelled)
        #expect(probe.ended.events == ["cancelled"])
        #expect(ConveySession.activeSessions.allSatisfy { $0.tag != tag })
    }

    @Test(.timeLimit(.minutes(5))) func cancellingTheCallersTaskCancelsTheExchange() async throws {
        let server = try hangingServer()
        let run = Task { try await HeldTask(server: server, log: log).download() }
        await probe.waitForStart()
        run.cancel()
        #expect(isCancelled(await run.result.failure))
        #expect(probe.ended.events == ["cancelled"])
    }

    @Test(.timeLimit(.minutes(5))) func aResponseArrivingAfterTheCancelStillEndsTheRunCancelled() async throws {
        let gate = Latch()
        // The transport answers only when the gate opens, whatever cancellation says meanwhile.
        let server = try stubServer(StubTransport { [probe] request in
            probe.markStarted()
            await gate.wait()
            return TransportResponse(url: request.request.url, body: Data("late".utf8))
        })
        let tag = "late-\(UUID())"
        let run = Task { try await HeldTask(server: server, sessionTag: tag, log: log).download() }
        await probe.waitForStart()
        #expect(ConveySession.cancel(sessionWithTag: tag) == 1)
        gate.open()
        #expect(isCancelled(await run.result.failure))
        #expect(log.events == ["didFail"])
    }

    @Test(.timeLimit(.minutes(5))) func aCancelAfterTheRunFinishedCountsNothing() async throws {
        let server = try stubServer(StubTransport { request in
            TransportResponse(url: request.request.url, body: Data("done".utf8))
        })
        let tag = "done-\(UUID())"
        let response = try await HeldTask(server: server, sessionTag: tag, log: log).download()
        #expect(response.stringResult == "done")
        #expect(ConveySession.cancel(sessionWithTag: tag) == 0)
    }

    // The wait never ends by itself: only the stop that cancels the wait the machine owns ends it.
    @Test(.timeLimit(.minutes(5))) func cancellingByTagDuringTheRetryWaitCancelsTheWaitNotTheCaller() async throws {
        let script = ScriptedTransport([.status(503)])
        let waiter = HeldRetryWaiter()
        let server = try stubServer(script.transport) { $0.retryWaiter = waiter }
        let tag = "waiting-\(UUID())"
        let caller = Task { () -> (Bool, Bool) in
            do {
                _ = try await RetriedTask(server: server, sessionTag: tag).download()
                return (false, Task.isCancelled)
            } catch {
                return (isCancelled(error), Task.isCancelled)
            }
        }
        await waiter.waitingStarted()
        #expect(ConveySession.cancel(sessionWithTag: tag) == 1)
        let (runCancelled, callerCancelled) = await caller.value
        #expect(runCancelled)
        #expect(!callerCancelled)
        #expect(waiter.requested == [.seconds(30)])
        #expect(script.requestCount == 1)
    }

    @Test(.timeLimit(.minutes(5))) func theDeadlineEndsARetryWaitAsATotalTimeout() async throws {
        let script = ScriptedTransport([.status(503)])
        let waiter = HeldRetryWaiter()
        let server = try stubServer(script.transport) { [clock] in
            $0.retryWaiter = waiter
            $0.runClock = clock
        }
        let run = Task { try await RetriedTask(server: server, configuration: TaskConfiguration(totalTimeout: .seconds(60))).download() }
        await waiter.waitingStarted()
        clock.advance(by: .seconds(60))
        #expect(totalTimeout(await run.result.failure)?.limit == .seconds(60))
        #expect(script.requestCount == 1)
    }
}
