import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Writes each event of each run as one short line, kept per run.
final class EventRecorder: RunObserver {
    private let lines = Locked<[UInt64: [String]]>([:])

    func observe(_ event: RunEvent) async throws {
        let line = Self.line(for: event)
        lines.withLock { $0[event.runID, default: []].append(line) }
    }

    /// The lines of every run, in the order the runs started.
    var runs: [[String]] { lines.value.sorted { $0.key < $1.key }.map(\.value) }

    /// The lines of the only run observed.
    var onlyRun: [String] { runs.count == 1 ? runs[0] : ["\(runs.count) runs"] }

    static func line(for event: RunEvent) -> String {
        let attempt = event.attempt
        switch event.kind {
        case .runStarted: return "runStarted"
        case .attemptStarted: return "attemptStarted \(attempt)"
        case .requestSent(let request): return "requestSent \(request.method) \(request.url.path())"
        case .responseReceived(let head): return "responseReceived \(head.statusCode)"
        case .bodyFinished(let response): return "bodyFinished \(response.statusCode)"
        case .exchangeFailed(let error): return "exchangeFailed \(describe(error))"
        case .redirectFollowed(let response): return "redirectFollowed \(response.statusCode)"
        case .cacheOutcome(let status): return "cacheOutcome \(status.rawValue)"
        case .cacheExchange(_, let response, let error, _): return "cacheExchange \(response.map { String($0.statusCode) } ?? describe(error))"
        case .attemptFinished(_, let response, let error, _):
            return "attemptFinished \(attempt) \(response.map { String($0.statusCode) } ?? "-") \(error.map(describe) ?? "ok")"
        case .retryScheduled(let error, let delay): return "retryScheduled \(describe(error)) \(delay)"
        case .credentialRefresh(let refreshed): return "credentialRefresh \(refreshed)"
        case .runFinished(let response, let error):
            return "runFinished \(response.map { String($0.statusCode) } ?? "-") \(error.map(describe) ?? "ok")"
        case .webSocketOpened(let subprotocol, let extensions):
            return "webSocketOpened \(subprotocol ?? "-") \(extensions.joined(separator: ", "))"
        case .webSocketMessage(let sent, let isText, let size, let contents):
            return "webSocketMessage \(sent ? "sent" : "received") \(isText ? "text" : "binary") \(size)"
                + (contents.map { " " + String(decoding: $0, as: UTF8.self) } ?? "")
        case .webSocketPing(let sent): return "webSocketPing \(sent ? "sent" : "received")"
        case .webSocketPong(let sent, _): return "webSocketPong \(sent ? "sent" : "received")"
        case .webSocketClosed(let code, let reason, let byClient, let sent, let received, let error):
            return "webSocketClosed \(code.map(String.init) ?? "-") \(reason.isEmpty ? "-" : reason) by \(byClient ? "client" : "server") "
                + "↑\(sent) ↓\(received) \(error.map(describe) ?? "ok")"
        }
    }

    private static func describe(_ error: (any Error)?) -> String {
        switch error {
        case let http as HTTPError: "HTTP \(http.statusCode)"
        case let convey as ConveyError where convey.isCancellation: "cancelled"
        case .some(let error): "\(type(of: error))"
        case nil: "-"
        }
    }
}

/// A plain task for observed runs, with its own retry rule.
private struct Observed: DownloadingTask {
    let server: ConveyServer
    var path = "observed"
    var retries = 0
    var cacheStrategy: CacheStrategy { server.configuration.defaultCacheStrategy }

    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { count <= retries ? 0 : nil }
}

@Suite("Observers")
@ConveyActor
struct RunObserverTests {
    let events = EventRecorder()

    private func server(_ transport: StubTransport, configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> ConveyServer {
        try stubServer(transport) {
            $0.observers = [events]
            $0.retryWaiter = RecordingRetryWaiter()
            configure(&$0)
        }
    }

    @Test func aSuccessIsEveryStepInOrder() async throws {
        try await Observed(server: server(.answering(body: "ok"))).send()
        #expect(events.onlyRun == ["runStarted", "attemptStarted 1", "requestSent GET /observed", "responseReceived 200", "bodyFinished 200",
                                   "attemptFinished 1 200 ok", "runFinished 200 ok"])
    }

    @Test func aRetryIsScheduledBetweenTwoAttempts() async throws {
        let script = ScriptedTransport([.status(503), .status(200)])
        try await Observed(server: server(script.transport), retries: 1).send()
        #expect(events.onlyRun == [
            "runStarted", "attemptStarted 1", "requestSent GET /observed", "responseReceived 503", "bodyFinished 503",
            "attemptFinished 1 503 HTTP 503", "retryScheduled HTTP 503 0.0 seconds",
            "attemptStarted 2", "requestSent GET /observed", "responseReceived 200", "bodyFinished 200",
            "attemptFinished 2 200 ok", "runFinished 200 ok",
        ])
    }

    @Test func aRedirectIsTwoExchangesInOneAttempt() async throws {
        let script = ScriptedTransport([.status(302, headers: ["Location": "/moved"]), .status(200)])
        try await Observed(server: server(script.transport)).send()
        #expect(events.onlyRun == [
            "runStarted", "attemptStarted 1", "requestSent GET /observed", "responseReceived 302", "bodyFinished 302", "redirectFollowed 302",
            "requestSent GET /moved", "responseReceived 200", "bodyFinished 200", "attemptFinished 1 200 ok", "runFinished 200 ok",
        ])
    }

    @Test func aCacheHitHasNoExchangeOnTheWire() async throws {
        let server = try server(.answering(headers: ["Cache-Control": "max-age=600"], body: "cached")) { $0.cache = DataCache() }
        try await Observed(server: server).send()
        try await Observed(server: server).send()
        #expect(events.runs.count == 2)
        #expect(events.runs.last == ["runStarted", "attemptStarted 1", "cacheOutcome hit", "attemptFinished 1 200 ok", "runFinished 200 ok"])
        #expect(events.runs.first?.contains("cacheOutcome network") == true)
    }

    @Test func aFailureEndsTheRunWithItsError() async throws {
        await #expect(throws: HTTPError.self) { try await Observed(server: server(.answering(status: 404))).send() }
        #expect(events.onlyRun == ["runStarted", "attemptStarted 1", "requestSent GET /observed", "responseReceived 404", "bodyFinished 404",
                                   "attemptFinished 1 404 HTTP 404", "runFinished 404 HTTP 404"])
    }

    @Test(.timeLimit(.minutes(5))) func aCancellationEndsTheExchangeTheAttemptAndTheRun() async throws {
        let probe = ExchangeProbe()
        let server = try server(StubTransport { _ in
            probe.markStarted()
            let never = AsyncStream<Void> { _ in }
            for await _ in never {}
            throw CancellationError()
        })
        let run = Task { try await Observed(server: server).send() }
        await probe.waitForStart()
        run.cancel()
        #expect(await run.result.failure?.isCancellation == true)
        #expect(events.onlyRun == ["runStarted", "attemptStarted 1", "requestSent GET /observed", "exchangeFailed cancelled",
                                   "attemptFinished 1 - cancelled", "runFinished - cancelled"])
    }

    @Test func aThrowingObserverChangesNothing() async throws {
        struct Throwing: RunObserver {
            struct Refused: Error {}
            func observe(_ event: RunEvent) async throws { throw Refused() }
        }
        let server = try server(.answering(body: "fine")) { $0.observers = [Throwing(), events] }
        let response = try await Observed(server: server).download()
        #expect(String(decoding: response.data, as: UTF8.self) == "fine")
        #expect(events.onlyRun.last == "runFinished 200 ok")
    }

    @Test(.timeLimit(.minutes(5))) func anObserverBlockedOnOneRunDoesNotStallAnother() async throws {
        let gate = ObserverGate()
        let server = try server(.answering(body: "fine")) { $0.observers = [BlockingOnPath(path: "/blocked", gate: gate), events] }
        let blocked = Task { try await Observed(server: server, path: "blocked").send() }
        await gate.waitUntilHeld()
        let other = try await Observed(server: server, path: "free").download()
        #expect(String(decoding: other.data, as: UTF8.self) == "fine")
        gate.open()
        try await blocked.value
        #expect(events.runs.count == 2)
    }
}

/// Blocks the thread of the run whose request goes to `path`, at its first `requestSent`, until the gate opens.
private struct BlockingOnPath: RunObserver {
    let path: String
    let gate: ObserverGate

    func observe(_ event: RunEvent) async throws {
        if case .requestSent(let request) = event.kind, request.url.path() == path { gate.hold() }
    }
}

/// A gate a thread blocks on (really blocks: a semaphore, not a suspension) until a test opens it.
private final class ObserverGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let held = Locked(false)

    func hold() {
        held.value = true
        semaphore.wait()
    }

    func open() { semaphore.signal() }

    func waitUntilHeld() async {
        while !held.value { await Task.yield() }
    }
}
