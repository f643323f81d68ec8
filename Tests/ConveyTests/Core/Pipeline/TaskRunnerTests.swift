import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A server that logs its `didFinish` calls.
final class LoggingServer: ConveyServer {
    let log: EventLog

    init(remote: Remote, log: EventLog, transport: any ConveyTransport) {
        self.log = log
        super.init(remote: remote, configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        self.transport = transport
    }

    /// The same, for `.answering(...)` and other stubs spelled as members.
    convenience init(remote: Remote, log: EventLog, transport: StubTransport) {
        self.init(remote: remote, log: log, transport: transport as any ConveyTransport)
    }

    override func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async {
        log.add("server.didFinish(status: \(response.map { String($0.statusCode) } ?? "none"), error: \(error == nil ? "no" : "yes"))")
    }
}

struct User: Codable, Sendable, Equatable {
    let id: Int
    let email: String
}

/// A task that logs every hook it gets.
struct HookedTask<Payload: Decodable & Sendable>: DownloadingTask {
    typealias DownloadPayload = Payload
    let server: ConveyServer
    let log: EventLog
    var path = "users/1"
    var failInDidReceive = false
    var addHeaderInWillSend = false

    func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
        log.add("willSendRequest")
        var request = request
        if addHeaderInWillSend { request.setValue("yes", forHTTPHeaderField: "X-Changed-By-Hook") }
        return request
    }

    func didReceiveResponse(response: ResponseHead, data: Data) async throws {
        log.add("didReceiveResponse(\(response.statusCode))")
        if failInDidReceive { throw HookRejection() }
    }

    func didFail(with error: any Error) async { log.add("didFail") }
    func didFinish(with response: ServerResponse<Payload>) async { log.add("didFinish") }
}

struct HookRejection: Error, Equatable {}

@Suite("Task runner")
@ConveyActor
struct TaskRunnerTests {
    let log = EventLog()

    func server(status: Int = 200, body: String = #"{"id": 1, "email": "a@b.c"}"#, seen: RequestLog? = nil) throws -> LoggingServer {
        let remote = try #require(Remote(name: "stub", string: "https://stub.example"))
        return LoggingServer(remote: remote, log: log, transport: .answering(status: status, body: body, log: log, seen: seen))
    }

    @Test func successRunsEveryHookOnceInOrder() async throws {
        let response = try await HookedTask<User>(server: server(), log: log).download()
        #expect(response.payload == User(id: 1, email: "a@b.c"))
        #expect(log.events == ["willSendRequest", "transport", "didReceiveResponse(200)", "didFinish",
                               "server.didFinish(status: 200, error: no)"])
    }

    @Test func httpFailureRunsDidFailAndServerDidFinishOnce() async throws {
        await #expect(throws: HTTPError.self) { try await HookedTask<User>(server: server(status: 500), log: log).download() }
        #expect(log.events == ["willSendRequest", "transport", "didReceiveResponse(500)", "didFail",
                               "server.didFinish(status: 500, error: yes)"])
    }

    @Test func decodingFailureIsAFailureForEveryHook() async throws {
        let error = await #expect(throws: ConveyError.self) {
            try await HookedTask<User>(server: server(body: #"{"id": "one"}"#), log: log).download()
        }
        #expect(log.events == ["willSendRequest", "transport", "didReceiveResponse(200)", "didFail",
                               "server.didFinish(status: 200, error: yes)"])
        guard let failure = error?.decodingFailure else { Issue.record("expected decodingFailed"); return }
        #expect(failure.codingPath == "id")
        #expect(failure.typeName == "User")
        #expect(failure.bodyPrefix == #"{"id": "one"}"#)
        #expect(failure.url?.absoluteString == "https://stub.example/users/1")
    }

    @Test func missingKeyNamesItsPathInsideArrays() async throws {
        let error = await #expect(throws: ConveyError.self) {
            try await HookedTask<[User]>(server: server(body: #"[{"id": 1, "email": "x"}, {"id": 2}]"#), log: log).download()
        }
        guard let failure = error?.decodingFailure else { Issue.record("expected decodingFailed"); return }
        #expect(failure.codingPath == "[1].email")
        #expect(failure.reason.contains("email"))
    }

    @Test func emptyBodyForATypedPayloadSaysSo() async throws {
        let error = await #expect(throws: ConveyError.self) {
            try await HookedTask<User>(server: server(body: ""), log: log).download()
        }
        guard let failure = error?.decodingFailure else { Issue.record("expected decodingFailed"); return }
        #expect(failure.reason == "the body is empty")
        #expect(failure.bodyPrefix == "(empty)")
    }

    @Test func willSendRequestChangesTheRequestReallySent() async throws {
        let seen = RequestLog()
        var task = HookedTask<Data>(server: try server(seen: seen), log: log)
        task.addHeaderInWillSend = true
        let response = try await task.download()
        #expect(seen.last?.request.value(forHTTPHeaderField: "X-Changed-By-Hook") == "yes")
        #expect(response.request.value(forHTTPHeaderField: "X-Changed-By-Hook") == "yes")
    }

    @Test func didReceiveResponseCanFailTheTaskWithItsOwnError() async throws {
        var task = HookedTask<Data>(server: try server(), log: log)
        task.failInDidReceive = true
        await #expect(throws: HookRejection.self) { try await task.download() }
        #expect(log.events.suffix(2) == ["didFail", "server.didFinish(status: 200, error: yes)"])
    }

    @Test func disabledServerSendsNothingAndFailsClearly() async throws {
        let server = try server()
        server.disabled = true
        let error = await #expect(throws: ConveyError.self) { try await HookedTask<Data>(server: server, log: log).download() }
        guard case .serverDisabled = error else { Issue.record("expected serverDisabled, got \(String(describing: error))"); return }
        #expect(!log.events.contains("transport"))
        #expect(log.events == ["didFail", "server.didFinish(status: none, error: yes)"])
    }

    @Test func serverWithoutRemoteFailsWithNoRemote() async throws {
        let server = ConveyServer(configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        server.transport = StubTransport.answering(log: log)
        let error = await #expect(throws: ConveyError.self) { try await HookedTask<Data>(server: server, log: log).download() }
        guard case .noRemote = error else { Issue.record("expected noRemote"); return }
        #expect(!log.events.contains("transport"))
    }

    @Test func remoteWithoutHostIsAnInvalidURL() async throws {
        let server = try server()
        server.remote = Remote(name: "broken", url: URL(fileURLWithPath: "/tmp"))
        let error = await #expect(throws: ConveyError.self) { try await HookedTask<Data>(server: server, log: log).download() }
        guard case .invalidURL(let text, _) = error else { Issue.record("expected invalidURL"); return }
        #expect(text.hasPrefix("file:///tmp"))
        #expect(!log.events.contains("transport"))
    }

    @Test(arguments: [(404, HTTPError.ClientError.notFound), (401, .unauthorized), (403, .forbidden), (499, .other(499))])
    func clientStatusesThrowMatchableClientErrors(status: Int, expected: HTTPError.ClientError) async throws {
        let error = await #expect(throws: HTTPError.self) {
            try await HookedTask<Data>(server: server(status: status, body: "nope"), log: log).download()
        }
        #expect(error?.clientError == expected)
        #expect(error?.serverError == nil)
        #expect(error?.statusCode == status)
        #expect(error?.bodyText == "nope")
        #expect(error?.isUnauthorized == (status == 401))
        #expect(error?.isForbidden == (status == 403))
    }

    @Test(arguments: [(500, HTTPError.ServerError.internalServer), (503, .serviceUnavailable), (599, .other(599))])
    func serverStatusesThrowMatchableServerErrors(status: Int, expected: HTTPError.ServerError) async throws {
        let error = await #expect(throws: HTTPError.self) {
            try await HookedTask<Data>(server: server(status: status), log: log).download()
        }
        #expect(error?.serverError == expected)
        #expect(error?.responseType == .serverError)
    }

    @Test(arguments: [100, 304, 302, 600])
    func statusesOutsideTheSuccessRangeAllThrow(status: Int) async throws {
        let error = await #expect(throws: HTTPError.self) { try await HookedTask<Data>(server: server(status: status), log: log).download() }
        #expect(error?.statusCode == status)
    }

    @Test func badStatusComesBackAsAResponseWhenReportingIsOff() async throws {
        let server = try server(status: 404, body: "missing")
        server.configuration.reportBadHTTPStatusAsError = false
        let response = try await HookedTask<Data>(server: server, log: log).download()
        #expect(response.statusCode == 404)
        #expect(response.responseType == .clientError)
        #expect(response.stringResult == "missing")
        #expect(log.events.contains("didFinish"))
    }

    @Test func responseCarriesTheExchange() async throws {
        let before = Date()
        let started = ContinuousClock.now
        let response = try await HookedTask<User>(server: server(), log: log).download()
        let whole = started.duration(to: .now)
        let after = Date()
        #expect(response.attemptNumber == 1)
        // The attempt started and was timed within the run: bounds, not magnitudes.
        #expect(response.startedAt >= before && response.startedAt <= after)
        #expect(response.duration > .zero && response.duration <= whole)
        #expect(response.request.url.absoluteString == "https://stub.example/users/1")
        #expect(response.httpResponse.statusCode == 200)
        #expect(response.stringResult == #"{"id": 1, "email": "a@b.c"}"#)
        #expect(response.responseType == .success)
    }

    @Test func responseDecodesAgainAsAnotherType() async throws {
        struct Email: Decodable, Sendable, Equatable { let email: String }
        let response = try await HookedTask<Data>(server: server(), log: log).download()
        let decoded: ServerResponse<Email> = try response.decoding()
        #expect(decoded.payload == Email(email: "a@b.c"))
        #expect(decoded.data == response.data)
        #expect(throws: ConveyError.self) { try response.decoding(as: [Int].self) }
    }

    @Test func stringPayloadsAreReadAsUTF8() async throws {
        let response = try await HookedTask<String>(server: server(body: "plain text"), log: log).download()
        #expect(response.payload == "plain text")
    }

    @Test func ignoredResultsTaskSucceedsWhateverTheBody() async throws {
        struct Ping: IgnoredResultsTask {
            let server: ConveyServer
            var path: String { "ping" }
        }
        let response = try await Ping(server: server(body: "<html>not json</html>")).download()
        #expect(response.payload == Data("<html>not json</html>".utf8))
        #expect(response.stringResult == "<html>not json</html>")
    }

    @Test func sendRunsTheTaskAndDropsThePayload() async throws {
        try await HookedTask<User>(server: server(), log: log).send()
        #expect(log.events.contains("didFinish"))
    }

    @Test func cancellationIsReportedAsCancelledAndNeverShown() async throws {
        let gate = StubTransport { _ in
            try await Task.sleep(for: .seconds(30))
            throw URLError(.badServerResponse)
        }
        let server = try stubServer(gate)
        let run = Task { try await HookedTask<Data>(server: server, log: log).download() }
        while log.events.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(20))
        run.cancel()
        let result = await run.result
        let error = try #require(result.failure)
        #expect(error.isCancellation)
        #expect(error.displayMessage == nil)
        #expect(log.events == ["willSendRequest", "didFail"])
    }
}
