import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

/// What an exchange step throws after `next` returned: the app's own error.
enum LateRefusal: Error, Equatable {
    case refused(status: Int)
}

/// A step that calls `next` and then throws the app's own error, whatever came back.
private struct RefusingAfterNext: Interceptor {
    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        let response = try await next(request)
        throw LateRefusal.refused(status: response.statusCode)
    }
}

/// A step that records the type of whatever `next` threw, then throws it on.
private struct CatchingStep: Interceptor {
    let caught: Locked<[String]>

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        do {
            return try await next(request)
        } catch {
            caught.withLock { $0.append(String(describing: type(of: error))) }
            throw error
        }
    }
}

/// A step that changes the response `next` returned in one of the ways an app can.
struct ResponseChangingStep: Interceptor {
    enum Change: String, CaseIterable, Sendable {
        case map, replacingHead, replacingData, newResponse, wrappedBody
    }
    let change: Change

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        let response = try await next(request)
        switch change {
        case .map:
            return response.map { $0 + Data(" and more".utf8) }
        case .replacingHead:
            var head = response.head
            head.fields["X-Changed"] = "yes"
            return response.replacing(head: head)
        case .replacingData:
            return response.replacing(data: Data("replaced".utf8))
        case .newResponse:
            return ServerResponse(answering: request, statusCode: 201, headers: ["X-Changed": "yes"], body: Data("made anew".utf8))
        case .wrappedBody:
            return response.replacing(body: response.body.mapChunks { Data($0.reversed()) })
        }
    }

    /// The body the caller gets after this change, from the origin's `original`. A streamed body's
    /// payload is empty, so `map` makes a body of its own out of nothing.
    func expectedBody(from original: String, streamed: Bool = false) -> String {
        switch change {
        case .map: streamed ? " and more" : original + " and more"
        case .replacingHead: original
        case .replacingData: "replaced"
        case .newResponse: "made anew"
        case .wrappedBody: String(original.reversed())
        }
    }
}

/// A server that logs its `didFinish(task:response:error:)`.
private final class OutcomeServer: ConveyServer {
    let finished = EventLog()

    override func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async {
        finished.add(error.map { "failed \(type(of: $0))" } ?? "succeeded \(response?.statusCode ?? 0)")
    }
}

/// The outcome of a run is the one its steps made: a change a step makes to the response is
/// taken, whichever way it is made and whatever the run delivers; an error a step throws reaches
/// the steps around it and the run as it was thrown; and hooks, observers and the server all hear
/// of the run's one real outcome.
@Suite("Step outcomes")
@ConveyActor
struct StepOutcomeTests {
    let log = EventLog()

    private func server(_ transport: StubTransport, configure: (inout ServerConfiguration) -> Void) throws -> OutcomeServer {
        var configuration = ServerConfiguration(echoSink: EchoCapture().sink)
        configure(&configuration)
        let remote = try #require(Remote(name: "stub", string: "https://stub.example"))
        let server = OutcomeServer(remote: remote, configuration: configuration)
        server.transport = transport
        return server
    }

    @Test(arguments: Placement.allCases, ResponseChangingStep.Change.allCases)
    func aChangedResponseIsTakenInMemory(_ placement: Placement, _ change: ResponseChangingStep.Change) async throws {
        let step = ResponseChangingStep(change: change)
        let server = try stubServer(.answering(body: "original")) { placement.install([step], in: &$0) }
        let response = try await SteppedTask(server: server, log: log).download()
        #expect(String(decoding: response.payload, as: UTF8.self) == step.expectedBody(from: "original"))
        #expect(response.data == response.payload)
        let changesHead = change == .replacingHead || change == .newResponse
        #expect((response.header("X-Changed") == "yes") == changesHead)
    }

    @Test(arguments: Placement.allCases, ResponseChangingStep.Change.allCases)
    func aChangedResponseIsTakenOnAStream(_ placement: Placement, _ change: ResponseChangingStep.Change) async throws {
        let step = ResponseChangingStep(change: change)
        let server = try stubServer(.answering(body: "original")) { placement.install([step], in: &$0) }
        let response = try await SteppedTask(server: server, log: log).stream()
        var body = Data()
        for try await chunk in response.payload { body.append(chunk) }
        #expect(String(decoding: body, as: UTF8.self) == step.expectedBody(from: "original", streamed: true))
        let changesHead = change == .replacingHead || change == .newResponse
        #expect((response.header("X-Changed") == "yes") == changesHead)
    }

    @Test(arguments: Placement.allCases, ResponseChangingStep.Change.allCases)
    func aChangedResponseIsTakenInADownloadToAFile(_ placement: Placement, _ change: ResponseChangingStep.Change) async throws {
        try await withTemporaryFolder { folder in
            let step = ResponseChangingStep(change: change)
            let server = try stubServer(.answering(body: "original")) { placement.install([step], in: &$0) }
            let destination = folder.appending(path: "changed.txt")
            let response = try await SteppedTask(server: server, log: log).download(to: destination)
            // Around the run, a download's body is in its file already, so a transform of its
            // chunks (there are none) leaves the file as the attempt wrote it.
            let expected = placement == .run && change == .wrappedBody ? "original" : step.expectedBody(from: "original", streamed: true)
            #expect(try String(contentsOf: destination, encoding: .utf8) == expected)
            let changesHead = change == .replacingHead || change == .newResponse
            #expect((response.header("X-Changed") == "yes") == changesHead)
        }
    }

    @Test func anInnerExchangeStepsErrorReachesTheOuterOneAsThrown() async throws {
        let caught = Locked<[String]>([])
        let server = try server(.answering()) { $0.exchangeInterceptors = [CatchingStep(caught: caught), RefusingAfterNext()] }
        await #expect(throws: LateRefusal.refused(status: 200)) {
            try await SteppedTask(server: server, log: log).send()
        }
        #expect(caught.value == ["LateRefusal"])
        #expect(server.finished.events == ["failed LateRefusal"])
    }

    @Test func anInnerExchangeStepsErrorReachesTheOuterOneAsThrownWithTracingOn() async throws {
        let caught = Locked<[String]>([])
        let server = try server(.answering()) {
            $0.exchangeInterceptors = [CatchingStep(caught: caught), RefusingAfterNext()]
            $0.tracing = TracingConfiguration(exporter: SpanCollector())
        }
        await #expect(throws: LateRefusal.refused(status: 200)) {
            try await SteppedTask(server: server, log: log).send()
        }
        #expect(caught.value == ["LateRefusal"])
    }

    /// A stream's exchange step that throws after `next`: the caller, the task's `didFail`, the
    /// server's `didFinish` and the observers all get the step's own error; none hears of a success.
    @Test(arguments: [false, true])
    func aStreamsStepThrowingAfterNextIsTheRunsOneOutcome(_ followsRedirects: Bool) async throws {
        let observer = EventRecorder()
        let server = try server(.answering(body: "streamed")) {
            $0.exchangeInterceptors = [RefusingAfterNext()]
            $0.observers = [observer]
            $0.followsRedirects = followsRedirects
        }
        await #expect(throws: LateRefusal.refused(status: 200)) {
            _ = try await SteppedTask(server: server, log: log).stream()
        }
        #expect(log.events == ["didFail refused(status: 200)"])
        #expect(server.finished.events == ["failed LateRefusal"])
        // No response reached the run: the step threw it away.
        #expect(observer.onlyRun.last == "runFinished - LateRefusal")
    }

    @Test func anEventStreamsStepErrorEndsTheEventsAsThrown() async throws {
        let server = try server(.answering(headers: ["Content-Type": "text/event-stream"], body: "data: one\n\n")) {
            $0.exchangeInterceptors = [RefusingAfterNext()]
        }
        await #expect(throws: LateRefusal.refused(status: 200)) {
            for try await _ in SteppedTask(server: server, log: log).events(ServerSentEvents.Configuration(reconnects: false)) {}
        }
    }

    /// What a step's wrapper throws mid-body reaches the reader as it was thrown, not as a transport failure.
    @Test func aStreamsBodyTransformErrorReachesTheReaderAsThrown() async throws {
        struct Failing: Interceptor {
            func intercept(_ request: OutgoingRequest,
                           next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
                let response = try await next(request)
                return response.replacing(body: response.body.mapChunks { _ in throw LateRefusal.refused(status: 0) })
            }
        }
        let server = try server(.answering(body: "streamed")) { $0.exchangeInterceptors = [Failing()] }
        let response = try await SteppedTask(server: server, log: log).stream()
        await #expect(throws: LateRefusal.refused(status: 0)) {
            for try await _ in response.payload {}
        }
    }
}
