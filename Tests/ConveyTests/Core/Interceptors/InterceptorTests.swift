import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Where a test puts its steps: around the run, or around each exchange on the wire.
enum Placement: String, CaseIterable, Sendable {
    case run, exchange

    /// `configuration` with `steps` in this placement.
    func install(_ steps: [any Interceptor], in configuration: inout ServerConfiguration) {
        switch self {
        case .run: configuration.interceptors = steps
        case .exchange: configuration.exchangeInterceptors = steps
        }
    }
}

/// A step that logs itself around `next`, with its name.
struct LoggingStep: Interceptor {
    let name: String
    let log: EventLog

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        log.add("\(name) > \(request.url.path())")
        let response = try await next(request)
        log.add("\(name) < \(response.statusCode)")
        return response
    }
}

/// A step that answers every request itself, from memory.
struct MemoryAnswer: Interceptor {
    let body: String

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        ServerResponse(answering: request, statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
    }
}

/// What `FailingStep` throws: an app's own error type.
enum StepRefusal: Error, Equatable {
    case circuitOpen(host: String)
}

/// A step that refuses every request with the app's own error.
struct FailingStep: Interceptor {
    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        throw StepRefusal.circuitOpen(host: request.url.host() ?? "")
    }
}

/// A step that waits, telling `probe` it started, until the test releases it or its task is
/// cancelled; then it goes on.
struct WaitingStep: Interceptor {
    let probe: ExchangeProbe
    let release = AsyncStream<Void>.makeStream()

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        probe.markStarted()
        for await _ in release.stream { break }
        probe.ended.add(Task.isCancelled ? "cancelled" : "released")
        try Task.checkCancellation()
        return try await next(request)
    }
}

/// A step that sets a field on the request it passes on.
struct FieldStep: Interceptor {
    let name: String
    let value: String

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        var changed = request
        changed.setValue(value, forHTTPHeaderField: name)
        return try await next(changed)
    }
}

/// A task whose steps and hooks a test chooses, logging its failure hook.
struct SteppedTask: DownloadingTask {
    typealias DownloadPayload = Data
    let server: ConveyServer
    let log: EventLog
    var path = "stepped"
    var interceptors: [any Interceptor] = []
    var exchangeInterceptors: [any Interceptor] = []
    var configuration: TaskConfiguration?
    var sessionTag: String?
    var retries = 0

    func didFail(with error: any Error) async { log.add("didFail \(error)") }

    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? {
        count <= retries ? 0 : nil
    }
}

@Suite("Interceptors")
@ConveyActor
struct InterceptorTests {
    let log = EventLog()

    @Test(arguments: Placement.allCases)
    func aStepAnsweringFromMemorySendsNothing(_ placement: Placement) async throws {
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen)) { placement.install([MemoryAnswer(body: #"{"id": 7, "email": "m@e.mo"}"#)], in: &$0) }
        let response = try await HookedTask<User>(server: server, log: log).download()
        #expect(response.payload == User(id: 7, email: "m@e.mo"))
        #expect(response.statusCode == 200)
        #expect(seen.requests.isEmpty)
    }

    @Test(arguments: Placement.allCases)
    func aStepsErrorReachesDidFailAndTheServerUnchangedInType(_ placement: Placement) async throws {
        let seen = RequestLog()
        let server = RefusalRecordingServer(remote: try #require(Remote(name: "stub", string: "https://stub.example")), transport: .answering(seen: seen))
        placement.install([FailingStep()], in: &server.configuration)
        await #expect(throws: StepRefusal.circuitOpen(host: "stub.example")) {
            try await SteppedTask(server: server, log: log).download()
        }
        #expect(log.events == ["didFail circuitOpen(host: \"stub.example\")"])
        #expect(server.refusals == [.circuitOpen(host: "stub.example")])
        #expect(seen.requests.isEmpty)
    }

    @Test(arguments: Placement.allCases)
    func stepsRunInTheirOrderTheServersOutsideTheTasks(_ placement: Placement) async throws {
        let server = try stubServer(.answering(log: log)) {
            placement.install([LoggingStep(name: "A", log: log), LoggingStep(name: "B", log: log)], in: &$0)
        }
        let own = [LoggingStep(name: "C", log: log)]
        var task = SteppedTask(server: server, log: log)
        switch placement {
        case .run: task.interceptors = own
        case .exchange: task.exchangeInterceptors = own
        }
        try await task.send()
        #expect(log.events == ["A > /stepped", "B > /stepped", "C > /stepped", "transport", "C < 200", "B < 200", "A < 200"])
    }

    @Test func theRunsStepsWrapTheExchangeSteps() async throws {
        let server = try stubServer(.answering(log: log)) {
            $0.interceptors = [LoggingStep(name: "run", log: log)]
            $0.exchangeInterceptors = [LoggingStep(name: "exchange", log: log)]
        }
        try await SteppedTask(server: server, log: log).send()
        #expect(log.events == ["run > /stepped", "exchange > /stepped", "transport", "exchange < 200", "run < 200"])
    }

    @Test func anExchangeStepSeesEveryRetryAndRedirectHopAndARunStepOneCall() async throws {
        let script = ScriptedTransport([.status(503), .status(302, headers: ["Location": "/moved"]), .status(200, body: "done")])
        let runs = EventLog()
        let exchanges = EventLog()
        let server = try stubServer(script.transport) {
            $0.interceptors = [LoggingStep(name: "run", log: runs)]
            $0.exchangeInterceptors = [LoggingStep(name: "exchange", log: exchanges)]
            $0.retryWaiter = RecordingRetryWaiter()
        }
        let response = try await SteppedTask(server: server, log: log, retries: 1).download()
        #expect(String(decoding: response.data, as: UTF8.self) == "done")
        #expect(runs.events == ["run > /stepped", "run < 200"])
        #expect(exchanges.events == ["exchange > /stepped", "exchange < 503", "exchange > /stepped", "exchange < 302",
                                     "exchange > /moved", "exchange < 200"])
    }

    @Test func aRunStepsChangeHoldsForEveryAttempt() async throws {
        let seen = RequestLog()
        let script = ScriptedTransport([.status(503), .status(200)])
        let server = try stubServer(StubTransport { request in
            seen.add(request)
            return try await script.transport.send(request)
        }) {
            $0.interceptors = [FieldStep(name: "X-Step", value: "signed")]
            $0.retryWaiter = RecordingRetryWaiter()
        }
        try await SteppedTask(server: server, log: log, retries: 1).send()
        #expect(seen.requests.map { $0.request.fields["X-Step"] } == ["signed", "signed"])
        #expect(seen.requests.map { $0.request.fields["User-Agent"] != nil } == [true, true])
    }

    @Test(arguments: Placement.allCases)
    func aFieldAStepAddsIsCheckedLikeAnyOther(_ placement: Placement) async throws {
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen)) { placement.install([FieldStep(name: "X-Bad", value: "a\r\nInjected: yes")], in: &$0) }
        do {
            try await SteppedTask(server: server, log: log).send()
            Issue.record("a field with CR LF was sent")
        } catch ConveyError.invalidHeaderField(let name, let source, _) {
            #expect(name == "X-Bad")
            #expect(source == "the request an interceptor passed on")
        }
        #expect(seen.requests.isEmpty)
    }

    @Test func aRunStepsOwnAnswerGoesThroughTheStatusRule() async throws {
        struct NotFoundAnswer: Interceptor {
            func intercept(_ request: OutgoingRequest,
                           next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
                ServerResponse(answering: request, statusCode: 404, body: Data("gone".utf8))
            }
        }
        let server = try stubServer(.answering()) { $0.interceptors = [NotFoundAnswer()] }
        do {
            try await SteppedTask(server: server, log: log).send()
            Issue.record("a 404 answer succeeded")
        } catch let error as HTTPError {
            #expect(error.statusCode == 404)
            #expect(error.bodyText == "gone")
        }
    }

    @Test func aRunStepThatChangesTheBodyGivesThePayloadItsBody() async throws {
        struct Rewriting: Interceptor {
            func intercept(_ request: OutgoingRequest,
                           next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
                try await next(request).replacing(data: Data(#"{"id": 2, "email": "new@e.mo"}"#.utf8))
            }
        }
        let server = try stubServer(.answering(body: #"{"id": 1, "email": "old@e.mo"}"#)) { $0.interceptors = [Rewriting()] }
        let response = try await HookedTask<User>(server: server, log: log).download()
        #expect(response.payload == User(id: 2, email: "new@e.mo"))
    }

    @Test func aRunStepMaySendTheRequestAgain() async throws {
        struct Twice: Interceptor {
            func intercept(_ request: OutgoingRequest,
                           next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
                do {
                    return try await next(request)
                } catch let error as HTTPError where error.statusCode == 503 {
                    return try await next(request)
                }
            }
        }
        let script = ScriptedTransport([.status(503), .status(200, body: "second")])
        let server = try stubServer(script.transport) { $0.interceptors = [Twice()] }
        let response = try await SteppedTask(server: server, log: log).download()
        #expect(String(decoding: response.data, as: UTF8.self) == "second")
        #expect(response.attemptNumber == 2)
        #expect(script.requestCount == 2)
        #expect(log.events.isEmpty)
    }

    @Test func aRunStepAnswersADownloadToAFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-steps-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = folder.appending(path: "answer.bin")
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen)) { $0.interceptors = [MemoryAnswer(body: #"{"from": "the run's step"}"#)] }
        let written = try await SteppedTask(server: server, log: log).download(to: destination)
        #expect(written.payload == destination)
        #expect(try String(contentsOf: destination, encoding: .utf8) == #"{"from": "the run's step"}"#)
        #expect(seen.requests.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["answer.bin"])
    }

    @Test func anExchangeStepAnswersADownloadToAFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-steps-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = folder.appending(path: "answer.json")
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen)) { $0.exchangeInterceptors = [MemoryAnswer(body: #"{"from": "memory"}"#)] }
        let written = try await SteppedTask(server: server, log: log).download(to: destination)
        #expect(try String(contentsOf: written.payload, encoding: .utf8) == #"{"from": "memory"}"#)
        #expect(seen.requests.isEmpty)
    }

    @Test(.timeLimit(.minutes(5)), arguments: Placement.allCases)
    func aWaitingStepCountsTowardTheTotalTimeout(_ placement: Placement) async throws {
        let probe = ExchangeProbe()
        let clock = ManualRunClock()
        let seen = RequestLog()
        let step = WaitingStep(probe: probe)
        let server = try stubServer(.answering(seen: seen)) {
            placement.install([step], in: &$0)
            $0.runClock = clock
        }
        let task = SteppedTask(server: server, log: log, configuration: TaskConfiguration(totalTimeout: .seconds(30)))
        let run = Task { try await task.download() }
        await probe.waitForStart()
        clock.advance(by: .seconds(30))
        // The deadline passed while the step waited: when it goes on, nothing is sent.
        step.release.continuation.yield()
        let error = await run.result.failure
        guard case ConveyError.totalTimedOut(let limit, _)? = error else {
            Issue.record("expected a total timeout, got \(String(describing: error))")
            return
        }
        #expect(limit == .seconds(30))
        #expect(probe.ended.events == ["released"])
        #expect(seen.requests.isEmpty)
    }

    @Test(.timeLimit(.minutes(5)), arguments: Placement.allCases)
    func cancellingTheCallerStopsAWaitingStep(_ placement: Placement) async throws {
        let probe = ExchangeProbe()
        let server = try stubServer(.answering()) { placement.install([WaitingStep(probe: probe)], in: &$0) }
        let task = SteppedTask(server: server, log: log)
        let run = Task { try await task.download() }
        await probe.waitForStart()
        run.cancel()
        let error = await run.result.failure
        #expect(error?.isCancellation == true)
        #expect(probe.ended.events == ["cancelled"])
        #expect(log.events == ["didFail Cancelled"])
    }

    @Test(.timeLimit(.minutes(5)), arguments: Placement.allCases)
    func cancellingByTagEndsTheRunWhenAWaitingStepGoesOn(_ placement: Placement) async throws {
        let probe = ExchangeProbe()
        let seen = RequestLog()
        let step = WaitingStep(probe: probe)
        let server = try stubServer(.answering(seen: seen)) { placement.install([step], in: &$0) }
        let tag = "steps-\(UUID().uuidString)"
        let task = SteppedTask(server: server, log: log, sessionTag: tag)
        let run = Task { try await task.download() }
        await probe.waitForStart()
        #expect(ConveySession.cancel(sessionWithTag: tag) == 1)
        step.release.continuation.yield()
        let error = await run.result.failure
        #expect(error?.isCancellation == true)
        #expect(seen.requests.isEmpty)
    }

    @Test(.timeLimit(.minutes(5))) func aDeadlineThatPassesWhileARunStepWaitsAfterTheAttemptsFailsTheRun() async throws {
        struct WaitsAfter: Interceptor {
            let probe: ExchangeProbe
            let release = AsyncStream<Void>.makeStream()
            func intercept(_ request: OutgoingRequest,
                           next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
                let response = try await next(request)
                probe.markStarted()
                for await _ in release.stream { break }
                return response
            }
        }
        let probe = ExchangeProbe()
        let clock = ManualRunClock()
        let step = WaitsAfter(probe: probe)
        let server = try stubServer(.answering()) {
            $0.interceptors = [step]
            $0.runClock = clock
        }
        let task = SteppedTask(server: server, log: log, configuration: TaskConfiguration(totalTimeout: .seconds(30)))
        let run = Task { try await task.download() }
        await probe.waitForStart()
        clock.advance(by: .seconds(30))
        step.release.continuation.yield()
        guard case ConveyError.totalTimedOut? = await run.result.failure else {
            Issue.record("a run whose step outlived its deadline succeeded")
            return
        }
    }
}

/// A server that keeps the app errors its hook is given.
final class RefusalRecordingServer: ConveyServer {
    private let errors = Locked<[StepRefusal]>([])

    init(remote: Remote, transport: StubTransport) {
        super.init(remote: remote, configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        self.transport = transport
    }

    nonisolated var refusals: [StepRefusal] { errors.value }

    override func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async {
        if let refusal = error as? StepRefusal { errors.withLock { $0.append(refusal) } }
    }
}
