import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// One cell of the chain's matrix: a kind of run, a step in the chain, a redirect, a transport.
struct ChainMatrixCell: Sendable, CustomTestStringConvertible {
    /// What the run delivers.
    enum Run: String, CaseIterable, Sendable {
        case memory, file, stream, events, head, upload
    }

    /// What besides the transport is in the chain.
    enum Step: String, CaseIterable, Sendable {
        /// Nothing of the app's.
        case none
        /// An exchange step that calls `next` and counts the body's bytes as they go up.
        case exchangeStep
        /// A run step that calls `next` and changes the response's head.
        case runStep
        /// Tracing, with spans exported.
        case tracing
    }

    /// How the request reaches the answer.
    enum Hop: String, CaseIterable, Sendable {
        /// A redirect to the same origin, followed.
        case followed
        /// Straight to the answer, the task not following redirects.
        case notFollowed
        /// A redirect to another origin, followed.
        case crossOrigin
    }

    let run: Run
    let step: Step
    let hop: Hop
    let transport: TransportKind

    var testDescription: String { "\(run.rawValue), \(step.rawValue), \(hop.rawValue), \(transport.rawValue)" }

    /// URLSession on Linux refuses a body an app reads at its own pace.
    var isRefused: Bool {
        #if canImport(FoundationNetworking)
        transport == .urlSession && (run == .stream || run == .events)
        #else
        false
        #endif
    }

    /// How many requests go on the wire.
    var requests: Int { hop == .notFollowed ? 1 : 2 }

    static let all: [ChainMatrixCell] = Run.allCases.flatMap { run in
        Step.allCases.flatMap { step in
            Hop.allCases.flatMap { hop in TransportKind.allCases.map { ChainMatrixCell(run: run, step: step, hop: hop, transport: $0) } }
        }
    }
}

/// Counts the bytes of every body that goes up through it: an exchange step that calls `next`
/// and wraps the body, as Docs/interceptors.md shows.
private struct ByteCountingStep: Interceptor {
    let bytes: Locked<Int>

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        let response = try await next(request)
        return response.replacing(body: response.body.observed(chunk: { [bytes] chunk in bytes.withLock { $0 += chunk.count } }))
    }
}

/// Adds a field to the head of the run's response: a run step whose change must be taken.
private struct HeadChangingStep: Interceptor {
    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        let response = try await next(request)
        var head = response.head
        head.fields["X-Run-Step"] = "changed"
        return response.replacing(head: head)
    }
}

/// The matrix task: a path and query, a method, a body file, redirects followed or not.
private struct MatrixTask: FileUploadingTask {
    let server: ConveyServer
    let path: String
    var queryParameters: [String: String]?
    var method: HTTPMethod = .get
    var file: URL?
    var followsRedirects = true
    var contentType: String { "application/octet-stream" }
    var uploadPayload: URL? { file }
    var echoStyle: TaskEchoStyle { [] }
}

/// Every kind of run (in memory, to a file, a stream, events, HEAD, an upload from a file) ×
/// every step (none, an exchange step calling `next`, a run step calling `next` and changing the
/// response, tracing) × every redirect (followed, not followed, to another origin) × both
/// transports, on the local servers: each cell checks the body byte for byte and what the run's
/// observers heard.
@Suite("The chain on the wire, every kind of run")
@ConveyActor
struct ChainMatrixWireTests {
    /// `200k.bin` on nginx, as `scripts/with-test-servers` writes it.
    nonisolated static let file200k = Data((0..<(200 << 10)).map { UInt8($0 % 253) })
    /// What the upload sends.
    nonisolated static let uploaded = Data((0..<(48 << 10)).map { UInt8(ascii: "a") + UInt8($0 % 26) })

    @Test(.wire, arguments: ChainMatrixCell.all)
    func cell(_ cell: ChainMatrixCell) async throws {
        try await withTemporaryFolder { folder in
            let observer = EventRecorder()
            let spans = SpanCollector()
            let counted = Locked(0)
            let (remote, task) = try await matrixTask(cell, folder: folder) { configuration in
                configuration.observers = [observer]
                switch cell.step {
                case .none: break
                case .exchangeStep: configuration.exchangeInterceptors = [ByteCountingStep(bytes: counted)]
                case .runStep: configuration.interceptors = [HeadChangingStep()]
                case .tracing: configuration.tracing = TracingConfiguration(exporter: spans)
                }
            }
            _ = remote

            let delivered: Delivered
            do {
                delivered = try await run(cell, task, folder: folder)
            } catch let ConveyError.transport(failure, _, code, _) where cell.isRefused {
                #expect(URLSessionTransport.isRefusedStream(failure, code: code))
                return
            }
            #expect(!cell.isRefused, "URLSession on Linux took a stream")

            // The body, byte for byte.
            switch cell.run {
            case .memory, .file, .stream:
                #expect(delivered.body == Self.file200k)
            case .head:
                #expect(delivered.body.isEmpty)
                #expect(delivered.head?.value(forHTTPHeaderField: "Content-Length") == String(Self.file200k.count))
            case .events:
                #expect(delivered.events.map(\.id) == ["1", "2", "3", "4", "5"])
                #expect(delivered.events.allSatisfy { $0.data.hasPrefix("{\"n\": ") })
            case .upload:
                if cell.hop == .crossOrigin {
                    #expect(delivered.body == Data("ok".utf8))
                } else {
                    let echoed = try JSONDecoder().decode(Echoed.self, from: delivered.body)
                    #expect(echoed.data == String(decoding: Self.uploaded, as: UTF8.self))
                }
            }
            if let head = delivered.head, cell.run != .events {
                #expect(head.statusCode == 200)
                #expect((head.value(forHTTPHeaderField: "X-Run-Step") == "changed") == (cell.step == .runStep))
            }

            // What the step saw go up.
            switch cell.step {
            case .none, .runStep: break
            case .exchangeStep:
                // Every hop's body goes up through it (a redirect's, which the redirect step drops, too).
                if cell.run == .head {
                    #expect(counted.value == 0)
                } else if cell.run != .events {
                    #expect(counted.value >= delivered.body.count)
                } else {
                    #expect(counted.value > 0)
                }
            case .tracing:
                #expect(spans.runSpans.count == 1)
                #expect(spans.clientSpans.count == cell.requests)
                #expect(spans.spans.allSatisfy { !$0.isError })
            }

            // What the observers heard: every request on the wire, each body to its end, no failure.
            let lines = observer.onlyRun
            #expect(lines.first == "runStarted")
            #expect(lines.count { $0.hasPrefix("requestSent") } == cell.requests)
            #expect(lines.count { $0.hasPrefix("bodyFinished") } == cell.requests)
            #expect(lines.count { $0.hasPrefix("redirectFollowed") } == cell.requests - 1)
            #expect(!lines.contains { $0.hasPrefix("exchangeFailed") }, "\(lines)")
            #expect(lines.contains("runFinished 200 ok"))
        }
    }

    /// What one run delivered.
    private struct Delivered {
        var body = Data()
        var events: [ServerSentEvent] = []
        var head: ResponseHead?
    }

    /// What httpbin echoes of an upload.
    private struct Echoed: Decodable {
        let data: String
    }

    private func matrixTask(_ cell: ChainMatrixCell, folder: URL,
                            configure: (inout ServerConfiguration) -> Void) async throws -> (Remote, MatrixTask) {
        let key = UUID().uuidString
        let nginx = try TestServers.nginx()
        let events = try TestServers.events()
        let httpbin = try TestServers.httpbin()
        let remote: Remote
        var path: String
        var query: [String: String]?
        switch (cell.run, cell.hop) {
        case (.events, .followed):
            (remote, path, query) = (events, "redirect", ["to": "/events?count=5&key=\(key)"])
        case (.events, .notFollowed):
            (remote, path, query) = (events, "events", ["count": "5", "key": key])
        case (.events, .crossOrigin):
            (remote, path, query) = (httpbin, "redirect-to", ["url": events.url.appending(path: "events").absoluteString + "?count=5&key=\(key)"])
        case (.upload, .followed):
            (remote, path, query) = (httpbin, "redirect-to", ["url": "/anything", "status_code": "307"])
        case (.upload, .notFollowed):
            (remote, path, query) = (httpbin, "anything", nil)
        case (.upload, .crossOrigin):
            let health = try TestServers.faults().url.appending(path: "health")
            (remote, path, query) = (httpbin, "redirect-to", ["url": health.absoluteString, "status_code": "307"])
        case (_, .followed):
            (remote, path, query) = (nginx, "redirect/200k.bin", nil)
        case (_, .notFollowed):
            (remote, path, query) = (nginx, "200k.bin", nil)
        case (_, .crossOrigin):
            (remote, path, query) = (httpbin, "redirect-to", ["url": nginx.url.appending(path: "200k.bin").absoluteString])
        }
        var configuration = ServerConfiguration(echoSink: { _ in })
        configure(&configuration)
        let server = ConveyServer(remote: remote, configuration: configuration)
        server.transport = cell.transport.make()
        var task = MatrixTask(server: server, path: path, queryParameters: query, followsRedirects: cell.hop != .notFollowed)
        switch cell.run {
        case .head: task.method = .head
        case .upload:
            let file = folder.appending(path: "upload.bin")
            try Self.uploaded.write(to: file)
            task.method = .post
            task.file = file
        case .memory, .file, .stream, .events: break
        }
        return (remote, task)
    }

    private func run(_ cell: ChainMatrixCell, _ task: MatrixTask, folder: URL) async throws -> Delivered {
        var delivered = Delivered()
        switch cell.run {
        case .memory, .head, .upload:
            let response = try await task.download()
            delivered.body = response.payload
            delivered.head = response.head
        case .file:
            let response = try await task.download(to: folder.appending(path: "file.bin"))
            delivered.body = try Data(contentsOf: response.payload)
            delivered.head = response.head
        case .stream:
            let response = try await task.stream()
            for try await chunk in response.payload { delivered.body.append(chunk) }
            delivered.head = response.head
        case .events:
            for try await event in task.events(ServerSentEvents.Configuration(reconnects: false)) { delivered.events.append(event) }
        }
        return delivered
    }
}
