import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A fresh folder under the temporary directory, removed when `body` ends however it ends.
func withTemporaryFolder<Result>(isolation: isolated (any Actor)? = #isolation, _ body: (URL) async throws -> Result) async throws -> Result {
    let folder = FileManager.default.temporaryDirectory.appending(path: "convey-cache-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try await body(folder)
}

/// A URL from a literal in a test; a typo fails the test instead of crashing the run.
func testURL(_ text: String) throws -> URL {
    try #require(URL(string: text))
}

/// A GET task whose cache strategy, headers and authorization opt-in a test chooses.
struct CacheProbeTask: ServerTask {
    let server: ConveyServer
    let path: String
    /// `nil` leaves the server's `defaultCacheStrategy` in charge.
    var strategy: CacheStrategy?
    var requestHeaders: Headers = []
    var cachesAuthorizedResponses = true
    var method: HTTPMethod = .get
    var queryParameters: [String: String]?
    var events: EventLog?
    var taskConfiguration: TaskConfiguration?

    var configuration: TaskConfiguration? { taskConfiguration }
    var cacheStrategy: CacheStrategy { strategy ?? server.configuration.defaultCacheStrategy }

    var headers: Headers {
        get async throws { requestHeaders }
    }

    func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
        events?.add("willSendRequest")
        return request
    }

    func didReceiveResponse(response: ResponseHead, data: Data) async throws {
        events?.add("didReceiveResponse \(response.statusCode)")
    }

    func didFinish(with response: ServerResponse<Data>) async {
        events?.add("didFinish \(response.cacheStatus.rawValue)")
    }

    func didFail(with error: any Error) async {
        events?.add("didFail")
    }
}

/// A stub origin server: answers from a closure and counts and keeps what it was sent.
final class StubOrigin: @unchecked Sendable {
    typealias Answer = @Sendable (OutgoingRequest, Int) throws -> (status: Int, headers: [String: String], body: String)

    private let lock = NSLock()
    private var received: [OutgoingRequest] = []
    private let answer: Answer

    /// `answer` gets each request and its 1-based number.
    init(_ answer: @escaping Answer) { self.answer = answer }

    var requests: [OutgoingRequest] { lock.withLock { received } }
    var count: Int { requests.count }

    var transport: StubTransport {
        StubTransport { [self] request in
            let number = lock.withLock {
                received.append(request.request)
                return received.count
            }
            let reply = try answer(request.request, number)
            return TransportResponse(url: request.request.url, statusCode: reply.status,
                                         headers: reply.headers, body: Data(reply.body.utf8))
        }
    }
}

/// A server for cache stub tests with a memory cache (or the given one) and the stub's transport.
@ConveyActor
func cachingStubServer(_ origin: StubOrigin, cache: DataCache = DataCache(),
                       strategy: CacheStrategy = .localFirst) throws -> ConveyServer {
    try stubServer(origin.transport) {
        $0.cache = cache
        $0.defaultCacheStrategy = strategy
    }
}

/// HTTP's date format, for building `Date`, `Expires` and `Last-Modified` values in tests.
func httpDate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
}

/// A clock tests move by hand, so rules about time never wait on the wall clock.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }

    var now: Date { lock.withLock { current } }

    /// Moves time forward by `seconds`.
    func advance(_ seconds: TimeInterval) { lock.withLock { current += seconds } }

    var cacheClock: CacheClock { CacheClock { [self] in now } }
}

/// Holds stub answers back until the test opens it; waiting stops when the waiting task is cancelled.
final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false

    func open() { lock.withLock { isOpen = true } }

    func wait() async throws {
        while !lock.withLock({ isOpen }) { try await Task.sleep(for: .milliseconds(2)) }
    }
}
