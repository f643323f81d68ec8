import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A GET whose response the streaming tests read as it arrives.
struct StreamedGet: ServerTask {
    let server: ConveyServer
    let path: String
    var queryParameters: [String: String]?
    var configuration: TaskConfiguration?
    var headers: Headers = [:]
}

extension TransportKind {
    /// The transports `stream()` and `events()` run on: all of them but URLSession on Linux, which refuses them.
    static var streaming: [TransportKind] {
        #if canImport(FoundationNetworking)
        allCases.filter { $0 != .urlSession }
        #else
        allCases
        #endif
    }
}

/// Header fields that carry credentials, and one that does not, for checking what reaches another origin.
enum CredentialFields {
    static let sent: Headers = ["Authorization": "Bearer secret-token", "Cookie": "session=secret-cookie",
                                "Proxy-Authorization": "Basic c2VjcmV0", "X-API-Key": "secret-key", "X-Other": "kept"]
    static let credentialNames = ["authorization", "cookie", "proxy-authorization", "x-api-key"]
}

/// A server on `remote` that sends through a transport of `kind`.
@ConveyActor
func streamingServer(_ kind: TransportKind, remote: Remote,
                     configure: (inout ServerConfiguration) -> Void = { _ in }) -> ConveyServer {
    var configuration = ServerConfiguration(echoSink: EchoCapture().sink)
    configure(&configuration)
    let server = ConveyServer(remote: remote, configuration: configuration)
    server.transport = kind.make()
    return server
}

/// What scripts/event-server.py saw for one test's key.
struct EventServerStats: Decodable, Sendable {
    let requests: Int
    let lastEventIDs: [String?]
    let disconnects: Int
    let sent: Int

    static func fetch(key: String) async throws -> EventServerStats {
        let base = try #require(TestServers.eventsURL, "CONVEY_EVENTS_URL is not set: run the suite with scripts/test")
        let url = try #require(URL(string: base.absoluteString + "/stats?key=\(key)"))
        return try JSONDecoder().decode(EventServerStats.self, from: try await URLSessionTransport().send(url).data)
    }

    /// Polls until the server's writes to /endless stop moving (two readings 250 ms apart agree), for at most 30 s.
    static func waitForStall(key: String) async throws -> EventServerStats {
        var stats = try await fetch(key: key)
        for _ in 0..<120 {
            try await Task.sleep(for: .milliseconds(250))
            let next = try await fetch(key: key)
            if next.sent == stats.sent, next.sent > 0 { return next }
            stats = next
        }
        return stats
    }

    /// Polls until `condition` holds, for at most `attempts` × 250 ms; returns the last stats.
    static func wait(key: String, attempts: Int = 120,
                     until condition: @Sendable (EventServerStats) -> Bool) async throws -> EventServerStats {
        var stats = try await fetch(key: key)
        for _ in 0..<attempts where !condition(stats) {
            try await Task.sleep(for: .milliseconds(250))
            stats = try await fetch(key: key)
        }
        return stats
    }
}

/// The waits a server-sent events reader asked for, returning at once: no test sleeps on them.
/// Past `limit` waits it throws, so a reader that reconnects without end stops the test instead of hanging it.
final class RecordedWaits: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Duration] = []
    private let limit: Int

    init(limit: Int = 20) {
        self.limit = limit
    }

    var durations: [Duration] { lock.withLock { items } }

    var sleep: @Sendable (Duration) async throws -> Void {
        { [self] duration in
            let count = lock.withLock {
                items.append(duration)
                return items.count
            }
            if count > limit { throw CancellationError() }
        }
    }
}
