import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Time for outbox tests: `sleep(until:)` moves the clock to that date at once and records the
/// wait, so retry and expiry rules run without waiting.
final class ManualOutboxClock: OutboxClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date
    private var recorded: [TimeInterval] = []

    init(now: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = now }

    var now: Date { lock.withLock { current } }
    /// The waits asked for, in seconds, in order.
    var waits: [TimeInterval] { lock.withLock { recorded } }

    func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }

    func sleep(until date: Date) async throws {
        try Task.checkCancellation()
        lock.withLock {
            recorded.append(date.timeIntervalSince(current))
            if date > current { current = date }
        }
        await Task.yield()
    }
}

/// A scratch folder for one test, removed afterwards.
struct OutboxScratch {
    let root = FileManager.default.temporaryDirectory.appending(path: "convey-outbox-\(UUID().uuidString)", directoryHint: .isDirectory)
    var folder: URL { root.appending(path: "outbox", directoryHint: .isDirectory) }

    func remove() { try? FileManager.default.removeItem(at: root) }

    /// Every file under the folder, as bytes, for greps.
    func allBytes() throws -> [(name: String, bytes: Data)] {
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        var files: [(String, Data)] = []
        while let url = enumerator?.nextObject() as? URL {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                files.append((url.lastPathComponent, try Data(contentsOf: url)))
            }
        }
        return files
    }
}

/// A stub server answering from a script: one answer per request, the last repeated. Records every request.
final class ScriptedAnswers: @unchecked Sendable {
    enum Answer {
        case status(Int, headers: [String: String] = [:], body: String = "")
        case fail(TransportFailure)
    }

    private let lock = NSLock()
    private var script: [Answer]
    private var seen: [TransportRequest] = []
    private let perPath: [String: [Answer]]

    init(_ script: [Answer], perPath: [String: [Answer]] = [:]) {
        self.script = script
        self.perPath = perPath
    }

    var requests: [TransportRequest] { lock.withLock { seen } }
    func keys() -> [String?] { requests.map { $0.request.value(forHTTPHeaderField: "Idempotency-Key") } }
    func paths() -> [String] { requests.map { $0.request.url.path() } }

    var transport: StubTransport {
        StubTransport { [self] request in
            let answer: Answer = lock.withLock {
                seen.append(request)
                let path = request.request.url.path()
                if let answers = perPath[path] {
                    let count = seen.filter { $0.request.url.path() == path }.count
                    return answers[min(count, answers.count) - 1]
                }
                let index = min(seen.count, script.count) - 1
                return script[max(index, 0)]
            }
            switch answer {
            case .status(let code, let headers, let body):
                return TransportResponse(url: request.request.url, statusCode: code, headers: headers, body: Data(body.utf8))
            case .fail(let kind):
                throw ConveyError.transport(kind, url: request.request.url, code: -1, reason: "scripted")
            }
        }
    }
}

/// A server that supplies credentials in `headers(for:)` and counts its hooks.
final class CredentialedServer: ConveyServer {
    var token = "tok-secret-0001"
    var cookie = "session=cookie-secret-0002"
    var finished: [(path: String, error: (any Error)?)] = []
    var refreshes = 0
    var refreshedToken: String?

    override func headers(for task: any DownloadingTask) async throws -> Headers {
        ["Authorization": "Bearer \(token)", "Cookie": cookie, "X-Client": "tests"]
    }

    override func refreshCredentials(after error: HTTPError) async throws -> Bool {
        refreshes += 1
        guard let refreshedToken else { return false }
        token = refreshedToken
        return true
    }

    override func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async {
        finished.append((task.path, error))
    }
}

/// An order posted as JSON.
struct PlaceOrder: JSONUploadingTask {
    struct Order: Codable, Sendable { let item: String }
    let server: ConveyServer
    let item: String
    var extraHeaders: Headers = []
    var path: String { "orders/\(item)" }
    var method: HTTPMethod { .post }
    var uploadPayload: Order? { Order(item: item) }
    var headers: Headers {
        get async throws {
            var headers = try await server.headers(for: self)
            headers.append(contentsOf: extraHeaders)
            return headers
        }
    }
}

@ConveyActor
func outboxServer(_ answers: ScriptedAnswers, echo: EchoCapture = EchoCapture(), configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> CredentialedServer {
    var configuration = ServerConfiguration(echoSink: echo.sink)
    configure(&configuration)
    let remote = try #require(Remote(name: "stub", string: "https://api.example/v1"))
    let server = CredentialedServer(remote: remote, configuration: configuration)
    server.transport = answers.transport
    return server
}

extension Outbox.Configuration {
    /// The standard configuration on a hand-moved clock.
    static func testing(_ clock: ManualOutboxClock, configure: (inout Outbox.Configuration) -> Void = { _ in }) -> Outbox.Configuration {
        var configuration = Outbox.Configuration()
        configuration.clock = clock
        configure(&configuration)
        return configuration
    }
}

extension OutboxItem.State {
    var name: String {
        switch self {
        case .pending: "pending"
        case .delivered(let status, _): "delivered \(status)"
        case .failed(let error): "failed \(error)"
        }
    }
}
