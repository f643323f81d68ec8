import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The hook contract of Docs/defining-tasks.md ("Hook contract"), checked for every delivery and
/// outcome: which task and server hooks ran, in order, exactly once.
@Suite("Hook contract")
@ConveyActor
struct HookContractTests {
    /// How a run hands over its response body.
    enum Delivery: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// `download()`: in memory, decoded.
        case memory
        /// `download(to:)` on a task whose payload is not the file.
        case file
        /// `FileDownloadingTask.download()`: the file is the task's payload.
        case fileTask
        /// `stream()`.
        case stream
        /// `events()`, one connection.
        case events

        var testDescription: String { rawValue }

        /// Whether the run's output is the task's own payload, so `didFinish(with:)` runs.
        var returnsTaskPayload: Bool { self == .memory || self == .fileTask }

        /// `stream()` and `events()`, which URLSession on Linux refuses.
        var streams: Bool { self == .stream || self == .events }
    }

    enum Outcome: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case success
        case httpError
        /// Only `events()` requires a media type.
        case contentTypeMismatch
        /// The caller's task is cancelled after `willSendRequest`, before any response.
        case cancellation

        var testDescription: String { rawValue }
    }

    /// Every delivery with every outcome that applies to it.
    nonisolated static let cases: [(Delivery, Outcome)] = Delivery.allCases.flatMap { delivery in
        Outcome.allCases.filter { $0 != .contentTypeMismatch || delivery == .events }.map { (delivery, $0) }
    }

    /// The wire cases: every transport, except streams and events over URLSession on Linux, which
    /// refuses them (`URLSessionTransport.isRefusedStream`; see ../shared/platform-notes.md).
    nonisolated static let wireCases: [(TransportKind, Delivery, Outcome)] = TransportKind.allCases.flatMap { kind in
        cases.filter { delivery, _ in !(refusesStreams(kind) && delivery.streams) }.map { (kind, $0.0, $0.1) }
    }

    nonisolated static func refusesStreams(_ kind: TransportKind) -> Bool {
        #if canImport(FoundationNetworking)
        kind == .urlSession
        #else
        false
        #endif
    }

    /// The hooks the contract says run, in order.
    static func expectedHooks(_ delivery: Delivery, _ outcome: Outcome) -> [String] {
        switch outcome {
        case .success:
            ["willSendRequest", "didReceiveResponse(200)"] + (delivery.returnsTaskPayload ? ["didFinish"] : [])
                + ["didSucceed(200)", "server.didFinish(status: 200, error: no)"]
        case .httpError:
            ["willSendRequest", "didReceiveResponse(404)", "didFail(HTTPError 404)", "server.didFinish(status: 404, error: yes)"]
        case .contentTypeMismatch:
            ["willSendRequest", "didReceiveResponse(200)", "didFail(decodingFailed)", "server.didFinish(status: 200, error: yes)"]
        case .cancellation:
            ["willSendRequest", "didFail(cancelled)", "server.didFinish(status: none, error: yes)"]
        }
    }

    @Test("Every delivery runs the hook contract on a stub", arguments: cases)
    func contractOnAStub(delivery: Delivery, outcome: Outcome) async throws {
        let log = EventLog()
        let transport = StubTransport { request in
            let url = request.request.url
            switch outcome {
            case .success:
                let (type, body) = delivery == .events ? ("text/event-stream", "id: 1\ndata: hello\n\n") : ("application/octet-stream", "hello")
                return TransportResponse(url: url, statusCode: 200, headers: ["Content-Type": type], body: Data(body.utf8))
            case .httpError:
                return TransportResponse(url: url, statusCode: 404, headers: ["Content-Type": "text/plain"], body: Data("missing".utf8))
            case .contentTypeMismatch:
                return TransportResponse(url: url, statusCode: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
            case .cancellation:
                // Answers only by being cancelled.
                await Self.suspendUntilCancelled()
                throw CancellationError()
            }
        }
        let remote = try #require(Remote(name: "stub", string: "https://stub.example"))
        let server = LoggingServer(remote: remote, log: log, transport: transport)
        try await run(delivery, outcome, server: server, path: "anything", log: log)
    }

    @Test("Every delivery runs the hook contract on the wire", .wire, arguments: wireCases)
    func contractOnTheWire(kind: TransportKind, delivery: Delivery, outcome: Outcome) async throws {
        let log = EventLog()
        let key = "hooks-\(UUID().uuidString)"
        let (remote, path): (Remote, String) = switch (delivery, outcome) {
        case (.events, .success): (try TestServers.events(), "events")
        case (_, .success), (_, .contentTypeMismatch): (try TestServers.httpbin(), "get")
        case (_, .httpError): (try TestServers.httpbin(), "status/404")
        case (_, .cancellation): (try TestServers.httpbin(), "delay/10")
        }
        let server = LoggingServer(remote: remote, log: log, transport: kind.make())
        try await run(delivery, outcome, server: server, path: path,
                      query: delivery == .events ? ["count": "2", "size": "16", "key": key] : nil, log: log)
    }

    /// Runs `delivery` to its `outcome` and checks the hooks that ran.
    private func run(_ delivery: Delivery, _ outcome: Outcome, server: ConveyServer, path: String,
                     query: [String: String]? = nil, log: EventLog) async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-hooks-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "body")
        let (sent, sentContinuation) = AsyncStream.makeStream(of: Void.self)
        let task = HookRecordingTask(server: server, log: log, path: path, queryParameters: query, sent: sentContinuation)
        let fileTask = HookRecordingFileTask(server: server, log: log, path: path, queryParameters: query,
                                             destination: destination, sent: sentContinuation)
        let running = Task { @ConveyActor () async throws -> Int in
            switch delivery {
            case .memory:
                return try await task.download().payload.count
            case .file:
                return try Data(contentsOf: try await task.download(to: destination).payload).count
            case .fileTask:
                return try Data(contentsOf: try await fileTask.download().payload).count
            case .stream:
                var count = 0
                for try await chunk in try await task.stream().payload { count += chunk.count }
                return count
            case .events:
                var count = 0
                for try await _ in task.events(ServerSentEvents.Configuration(reconnects: false)) { count += 1 }
                return count
            }
        }
        if outcome == .cancellation {
            for await _ in sent { break }
            running.cancel()
        }
        let result = await running.result
        switch outcome {
        case .success:
            let received = try result.get()
            #expect(received > 0, "the \(delivery) run delivered nothing")
        case .httpError:
            #expect(throws: HTTPError.self) { try result.get() }
        case .contentTypeMismatch:
            #expect { try result.get() } throws: { error in
                guard case ConveyError.decodingFailed = error else { return false }
                return true
            }
        case .cancellation:
            #expect { try result.get() } throws: { error in
                guard case ConveyError.cancelled = error else { return false }
                return true
            }
        }
        #expect(log.events == Self.expectedHooks(delivery, outcome))
    }

    /// Suspends without a timer until the calling task is cancelled.
    private nonisolated static func suspendUntilCancelled() async {
        let (never, continuation) = AsyncStream.makeStream(of: Void.self)
        await withTaskCancellationHandler {
            for await _ in never {}
        } onCancel: {
            continuation.finish()
        }
    }
}

/// The hooks a recording task logs, shared by the memory and the file-payload tasks.
protocol HookRecording: DownloadingTask {
    var log: EventLog { get }
    /// Told each time a request is about to go out.
    var sent: AsyncStream<Void>.Continuation { get }
}

extension HookRecording {
    func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
        log.add("willSendRequest")
        sent.yield()
        return request
    }

    func didReceiveResponse(response: ResponseHead, data: Data) async throws {
        log.add("didReceiveResponse(\(response.statusCode))")
    }

    func didFinish(with response: ServerResponse<DownloadPayload>) async { log.add("didFinish") }

    func didSucceed(with response: ServerResponse<Data>) async { log.add("didSucceed(\(response.statusCode))") }

    func didFail(with error: any Error) async {
        switch error {
        case let error as HTTPError: log.add("didFail(HTTPError \(error.statusCode))")
        case ConveyError.decodingFailed: log.add("didFail(decodingFailed)")
        case ConveyError.cancelled: log.add("didFail(cancelled)")
        default: log.add("didFail(\(error))")
        }
    }
}

/// A task whose payload is the body's bytes.
struct HookRecordingTask: HookRecording {
    typealias DownloadPayload = Data
    let server: ConveyServer
    let log: EventLog
    let path: String
    let queryParameters: [String: String]?
    let sent: AsyncStream<Void>.Continuation
}

/// A task whose payload is the file its body goes to.
struct HookRecordingFileTask: HookRecording, FileDownloadingTask {
    let server: ConveyServer
    let log: EventLog
    let path: String
    let queryParameters: [String: String]?
    let destination: URL
    let sent: AsyncStream<Void>.Continuation
}
