import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// One case of the stage chain: a delivery, with or without a `DataCache` on the server, through a
/// redirect (302 → final) or straight to the final response.
struct ChainCase: Sendable, CustomTestStringConvertible {
    /// How a run hands over its response body.
    enum Delivery: String, CaseIterable, Sendable {
        /// `download()`: in memory, decoded.
        case memory
        /// `download(to:)`.
        case file
        /// `stream()`.
        case stream
        /// `events()`, one connection.
        case events

        /// `stream()` and `events()`, which URLSession on Linux refuses.
        var streams: Bool { self == .stream || self == .events }
    }

    let delivery: Delivery
    let cached: Bool
    let redirected: Bool

    var testDescription: String { "\(delivery.rawValue), \(cached ? "cache" : "no cache"), \(redirected ? "302 → final" : "direct")" }

    /// Whether the cache takes part: only a body kept in memory goes through it.
    var usesCache: Bool { cached && delivery == .memory }

    /// Every delivery, with and without a cache, with and without a redirect.
    static let all: [ChainCase] = Delivery.allCases.flatMap { delivery in
        [false, true].flatMap { cached in [false, true].map { ChainCase(delivery: delivery, cached: cached, redirected: $0) } }
    }

    /// The hooks one successful run calls, in the contract's order (Docs/defining-tasks.md,
    /// "Hook contract"): `willSendRequest` sees the first hop, everything after it the final one.
    func expectedHooks(firstPath: String, finalPath: String, cacheStatus: CacheStatus) -> [String] {
        ["willSendRequest \(firstPath)", "didReceiveResponse 200 \(finalPath)"]
            + (delivery == .memory ? ["didFinish \(finalPath) \(cacheStatus.rawValue)"] : [])
            + ["didSucceed 200 \(finalPath) \(cacheStatus.rawValue)", "server.didFinish 200 \(finalPath) no error"]
    }
}

/// A task that logs every hook of the contract with what it saw, and echoes and records each hop.
struct ChainTask: ServerTask {
    let server: ConveyServer
    let path: String
    let log: EventLog
    var queryParameters: [String: String]?
    var echoStyle: TaskEchoStyle { [.consoleMinimum, .recorded] }

    func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
        log.add("willSendRequest \(request.url.path)")
        return request
    }

    func didReceiveResponse(response: ResponseHead, data: Data) async throws {
        log.add("didReceiveResponse \(response.statusCode) \(response.url.path)")
    }

    func didFinish(with response: ServerResponse<Data>) async {
        log.add("didFinish \(response.request.url.path) \(response.cacheStatus.rawValue)")
    }

    func didSucceed(with response: ServerResponse<Data>) async {
        log.add("didSucceed \(response.statusCode) \(response.request.url.path) \(response.cacheStatus.rawValue)")
    }

    func didFail(with error: any Error) async {
        log.add("didFail \(error)")
    }
}

/// A server that logs its `didFinish(task:response:error:)`, on a transport a test chooses (its
/// built-in one unless given one).
final class ChainServer: ConveyServer {
    let log: EventLog

    init(remote: Remote, log: EventLog, cache: DataCache?, echo: EchoCapture, recorder: TaskRecorder, transport: (any ConveyTransport)? = nil) {
        self.log = log
        var configuration = ServerConfiguration(echoSink: echo.sink)
        configuration.cache = cache
        configuration.recorder = recorder
        super.init(remote: remote, configuration: configuration)
        if let transport { self.transport = transport }
    }

    override func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async {
        let status = response.map { "\($0.statusCode) \($0.request.url.path)" } ?? "none"
        log.add("server.didFinish \(status) \(error == nil ? "no error" : "error")")
    }
}

/// What one run delivered, whatever its delivery.
struct ChainDelivery: Sendable {
    /// The body as the caller got it: in memory, read from the file, or read from the stream.
    var body = Data()
    /// The events of `events()`.
    var events: [ServerSentEvent] = []
    /// The final response's request URL (for events, the stream's URL each event names).
    var requestURL: URL?
    /// The final response's own URL, as its head says.
    var responseURL: URL?
    var statusCode: Int?

    /// Runs `task` with `delivery`; a file goes to a fresh name in `folder`.
    static func run(_ delivery: ChainCase.Delivery, _ task: ChainTask, folder: URL) async throws -> ChainDelivery {
        var delivered = ChainDelivery()
        switch delivery {
        case .memory:
            let response = try await task.download()
            delivered.body = response.payload
            delivered.note(response)
        case .file:
            let response = try await task.download(to: folder.appending(path: UUID().uuidString))
            delivered.body = try Data(contentsOf: response.payload)
            delivered.note(response)
        case .stream:
            let response = try await task.stream()
            for try await chunk in response.payload { delivered.body.append(chunk) }
            delivered.note(response)
        case .events:
            for try await event in task.events(ServerSentEvents.Configuration(reconnects: false)) { delivered.events.append(event) }
            delivered.requestURL = delivered.events.last?.url
        }
        return delivered
    }

    private mutating func note<Payload>(_ response: ServerResponse<Payload>) {
        requestURL = response.request.url
        responseURL = response.httpResponse.url
        statusCode = response.statusCode
    }
}

/// The chain of stages for every delivery, with and without a cache, through a redirect and
/// without, on a stub origin: what the caller gets, which request the final response answers,
/// which hops echo and recordings show, where the cache takes part, and the hook contract.
@Suite("Stage chain")
@ConveyActor
struct StageChainTests {
    /// The final body, as bytes and as an event stream.
    nonisolated static let finalBody = "final body"
    nonisolated static let eventBody = "id: 7\ndata: final body\n\n"

    /// `/old` answers 302 → `/new` (never stored); `/new` and `/direct` answer the final body,
    /// fresh for a minute.
    private func origin(_ delivery: ChainCase.Delivery) -> StubOrigin {
        StubOrigin { request, _ in
            switch request.url.path {
            case "/old":
                return (302, ["Location": "/new", "Cache-Control": "no-store"], "moved")
            default:
                let contentType = delivery == .events ? "text/event-stream" : "application/octet-stream"
                return (200, ["Content-Type": contentType, "Cache-Control": "max-age=60"],
                        delivery == .events ? Self.eventBody : Self.finalBody)
            }
        }
    }

    @Test("The chain delivers, follows, echoes, caches and calls the hooks", arguments: ChainCase.all)
    func chain(_ chainCase: ChainCase) async throws {
        try await withTemporaryFolder { folder in
            let origin = origin(chainCase.delivery)
            let log = EventLog()
            let echo = EchoCapture()
            let recorder = TaskRecorder(folder: folder.appending(path: "records"))
            let remote = try #require(Remote(name: "stub", string: "https://stub.example"))
            let server = ChainServer(remote: remote, log: log, cache: chainCase.cached ? DataCache() : nil, echo: echo,
                                     recorder: recorder, transport: origin.transport)
            let (firstPath, finalPath) = chainCase.redirected ? ("/old", "/new") : ("/direct", "/direct")
            let task = ChainTask(server: server, path: String(firstPath.dropFirst()), log: log)
            let hops = chainCase.redirected ? ["/old", "/new"] : ["/direct"]

            // The first run: every stage reaches the origin.
            let first = try await ChainDelivery.run(chainCase.delivery, task, folder: folder)
            try expectFinalBody(first, chainCase, finalURL: "https://stub.example\(finalPath)")
            #expect(origin.requests.map(\.url.path) == hops)
            #expect(log.events == chainCase.expectedHooks(firstPath: firstPath, finalPath: finalPath, cacheStatus: .network))
            let records = await recorder.records().map { "\($0.statusCode ?? 0) \($0.url ?? "?") attempt \($0.attempt)" }.sorted()
            #expect(records == hops.map { "\($0 == "/old" ? 302 : 200) https://stub.example\($0) attempt 1" }.sorted())
            let echoed = echo.text
            #expect(echoed.contains("GET https://stub.example\(finalPath) → 200"))
            #expect(echoed.contains("GET https://stub.example/old → 302") == chainCase.redirected)

            // The same GET again: only a body kept in memory is answered by the cache, and only
            // the final hop is stored (the redirect is `no-store`).
            let second = try await ChainDelivery.run(chainCase.delivery, task, folder: folder)
            try expectFinalBody(second, chainCase, finalURL: "https://stub.example\(finalPath)")
            let secondHops = chainCase.usesCache ? hops.filter { $0 == "/old" } : hops
            #expect(origin.requests.map(\.url.path) == hops + secondHops)
            let status: CacheStatus = chainCase.usesCache ? .hit : .network
            #expect(log.events == chainCase.expectedHooks(firstPath: firstPath, finalPath: finalPath, cacheStatus: .network)
                + chainCase.expectedHooks(firstPath: firstPath, finalPath: finalPath, cacheStatus: status))
        }
    }

    /// What the caller got is the final body, from the final hop's request.
    private func expectFinalBody(_ delivered: ChainDelivery, _ chainCase: ChainCase, finalURL: String) throws {
        #expect(delivered.requestURL?.absoluteString == finalURL)
        switch chainCase.delivery {
        case .events:
            #expect(delivered.events == [ServerSentEvent(type: "message", data: Self.finalBody, id: "7", url: try testURL(finalURL))])
        case .memory, .file, .stream:
            #expect(String(decoding: delivered.body, as: UTF8.self) == Self.finalBody)
            #expect(delivered.responseURL?.absoluteString == finalURL)
            #expect(delivered.statusCode == 200)
        }
    }

    @Test("The chain has a cache step only for a body in memory on a server with a cache", arguments: ChainCase.Delivery.allCases, [false, true])
    func cacheStepIsInTheChainOnlyForMemoryWithACache(delivery: ChainCase.Delivery, cached: Bool) throws {
        let server = try stubServer(.answering()) { $0.cache = cached ? DataCache() : nil }
        let task = ChainTask(server: server, path: "direct", log: EventLog())
        let plan = switch delivery {
        case .memory: plan(task, MemoryDelivery(task: task))
        case .file: plan(task, FileDelivery(destination: URL(filePath: "/nonexistent/file"), resumes: false, permissions: 0o600, progress: nil))
        case .stream, .events: plan(task, StreamDelivery(totalTimeout: nil, bufferSize: 1024))
        }
        let chain = RunChain.chain(for: task, plan: plan, start: RunStart(), run: TransportStep())
        let isCached = chain.steps.contains { $0 is CacheStep }
        #expect(isCached == (cached && delivery == .memory))
    }

    private func plan<Delivery: ResponseDelivery>(_ task: ChainTask, _ delivery: Delivery) -> RunPlan {
        RunPlan(task: task, start: RunStart(), deliveryTimeout: delivery.totalTimeout, keepsBodyInMemory: delivery.keepsBodyInMemory,
                bufferSize: delivery.bufferSize)
    }
}

extension ChainCase.Delivery: CustomTestStringConvertible {
    var testDescription: String { rawValue }
}
