import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

// Docs/interceptors.md's examples, exactly as the page shows them: the tests below check that the
// page still shows each one and run it.

// interceptors:signing:begin
/// Signs every request as it goes out, each redirect hop and retry included: the signature
/// covers the method, the path and the `Date` field, under a key the server shares.
struct RequestSigning: Interceptor {
    /// Your HMAC of a text, as the server computes it (CryptoKit's `HMAC` on Apple platforms).
    let sign: @Sendable (String) -> String

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        var signed = request
        let date = Date.now.ISO8601Format()
        signed.setValue(date, forHTTPHeaderField: "Date")
        let path = request.url.path(percentEncoded: true)
        signed.setValue(sign("\(request.method.rawValue) \(path)\n\(date)"), forHTTPHeaderField: "Signature")
        return try await next(signed)
    }
}
// interceptors:signing:end

// interceptors:rate-limit:begin
/// At most `perSecond` requests a second to each host: a request over the limit waits for its
/// turn (the wait counts toward the task's total timeout, and a cancellation ends it).
struct HostRateLimit: Interceptor {
    let perSecond: Int
    /// The time, and how the step waits; tests give a clock that stands still and a wait that records.
    var now: @Sendable () -> ContinuousClock.Instant = { .now }
    var wait: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    private let turns = Turns()

    init(perSecond: Int) {
        self.perSecond = perSecond
    }

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        let delay = await turns.take(host: request.url.host() ?? "", at: now(), every: .seconds(1) / max(perSecond, 1))
        if delay > .zero { try await wait(delay) }
        return try await next(request)
    }

    /// The next free turn of each host.
    private actor Turns {
        private var next: [String: ContinuousClock.Instant] = [:]

        func take(host: String, at now: ContinuousClock.Instant, every interval: Duration) -> Duration {
            let turn = max(now, next[host] ?? now)
            next[host] = turn + interval
            return turn - now
        }
    }
}
// interceptors:rate-limit:end

// interceptors:circuit-breaker:begin
/// Stops calling a host that keeps failing: after `threshold` runs in a row ended by a server
/// error or a lost connection (each after its own retries), every run to that host fails at once
/// with `CircuitOpen` until `cooldown` has passed; then one run may try again.
struct CircuitBreaker: Interceptor {
    struct CircuitOpen: Error, Equatable {
        let host: String
    }

    let threshold: Int
    let cooldown: Duration
    /// The time; tests give a clock they move by hand.
    var now: @Sendable () -> ContinuousClock.Instant = { .now }
    private let hosts = Hosts()

    init(threshold: Int, cooldown: Duration) {
        self.threshold = threshold
        self.cooldown = cooldown
    }

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        let host = request.url.host() ?? ""
        guard await hosts.mayCall(host, at: now()) else { throw CircuitOpen(host: host) }
        do {
            let response = try await next(request)
            await hosts.record(host, failed: response.statusCode >= 500, threshold: threshold, until: now() + cooldown)
            return response
        } catch let error as HTTPError where error.serverError != nil {
            await hosts.record(host, failed: true, threshold: threshold, until: now() + cooldown)
            throw error
        } catch let error as ConveyError {
            if case .transport = error { await hosts.record(host, failed: true, threshold: threshold, until: now() + cooldown) }
            throw error
        }
    }

    /// Failures in a row and the end of the cooldown, per host.
    private actor Hosts {
        private var failures: [String: Int] = [:]
        private var openUntil: [String: ContinuousClock.Instant] = [:]

        func mayCall(_ host: String, at now: ContinuousClock.Instant) -> Bool {
            guard let until = openUntil[host] else { return true }
            return now >= until
        }

        func record(_ host: String, failed: Bool, threshold: Int, until: ContinuousClock.Instant) {
            guard failed else {
                failures[host] = nil
                openUntil[host] = nil
                return
            }
            failures[host, default: 0] += 1
            if failures[host, default: 0] >= threshold { openUntil[host] = until }
        }
    }
}
// interceptors:circuit-breaker:end

// interceptors:observer:begin
/// Logs every exchange on the wire that took longer than `limit`, with its timings.
struct SlowExchangeLog: RunObserver {
    let limit: Duration
    let log: @Sendable (String) -> Void

    func observe(_ event: RunEvent) async throws {
        guard case .bodyFinished(let response) = event.kind, response.duration > limit else { return }
        log("slow: \(response.request.method) \(response.request.url.path()) → \(response.statusCode), \(response.metrics)")
    }
}
// interceptors:observer:end

// interceptors:download-meter:begin
/// Counts the bytes of every response body, per host, as they go up: around each exchange, a
/// download to a file is counted chunk by chunk as its writer pulls it, with nothing held.
struct DownloadMeter: Interceptor {
    let count: @Sendable (_ host: String, _ bytes: Int) -> Void

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        let response = try await next(request)
        let host = request.url.host() ?? ""
        return response.replacing(body: response.body.observed(chunk: { count(host, $0.count) }))
    }
}
// interceptors:download-meter:end

// interceptors:body-tee:begin
/// Sends a copy of every body chunk to `copy` as the reader takes it, and `ended` how the body
/// ended: the app reads the stream, and an audit log gets the same bytes, with nothing held.
struct BodyTee: Interceptor {
    let copy: @Sendable (Data) -> Void
    let ended: @Sendable ((any Error)?) -> Void

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        let response = try await next(request)
        return response.replacing(body: response.body.observed(chunk: copy, end: ended))
    }
}
// interceptors:body-tee:end

/// A clock a test moves by hand, for the circuit breaker.
private final class HandClock: Sendable {
    private let current = Locked(ContinuousClock.now)
    var now: ContinuousClock.Instant { current.value }
    func advance(by duration: Duration) { current.withLock { $0 += duration } }
}

private struct Fetch: DownloadingTask {
    let server: ConveyServer
    var path = "item"
}

@Suite("The interceptors page's examples")
@ConveyActor
struct InterceptorDocsExampleTests {
    private static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: ["signing", "rate-limit", "circuit-breaker", "observer", "download-meter", "body-tee"])
    func thePageShowsTheExampleWhole(_ name: String) throws {
        let source = try String(contentsOf: URL(filePath: #filePath), encoding: .utf8)
        let start = try #require(source.range(of: "// interceptors:\(name):begin\n")).upperBound
        let end = try #require(source.range(of: "// interceptors:\(name):end", range: start..<source.endIndex)).lowerBound
        let page = try String(contentsOf: Self.root.appending(path: "Docs/interceptors.md"), encoding: .utf8)
        #expect(page.contains("```swift\n" + source[start..<end] + "```\n"), "Docs/interceptors.md no longer shows the \(name) example")
    }

    @Test(.wire) func signingPassesTheServersCheckAfterACrossOriginRedirect() async throws {
        let key = Array("convey-signing-test-key".utf8)
        let server = try httpbinServer { $0.exchangeInterceptors = [RequestSigning { SHA256.authenticationCode(key: key, message: Array($0.utf8)) }] }
        let target = try TestServers.fault("/signed")
        struct Redirected: ServerTask {
            let server: ConveyServer
            let target: URL
            var path: String { "redirect-to" }
            var queryParameters: [String: String]? { ["url": target.absoluteString] }
        }
        let response = try await Redirected(server: server, target: target).download()
        #expect(response.stringResult?.contains(#""verified": true"#) == true)
    }

    @Test func theRateLimitSpacesRequestsToOneHost() async throws {
        let waits = Locked<[Duration]>([])
        let clock = HandClock()
        var limit = HostRateLimit(perSecond: 4)
        limit.now = { clock.now }
        limit.wait = { duration in waits.withLock { $0.append(duration) } }
        let server = try stubServer(.answering()) { $0.exchangeInterceptors = [limit] }
        for _ in 0..<3 { try await Fetch(server: server).send() }
        // At one instant: the first goes at once, each later one a quarter second after the one before.
        #expect(waits.value == [.milliseconds(250), .milliseconds(500)])
        clock.advance(by: .seconds(1))
        try await Fetch(server: server).send()
        #expect(waits.value.count == 2)
    }

    @Test func theCircuitOpensAfterFailuresAndClosesAfterItsCooldown() async throws {
        let clock = HandClock()
        var breaker = CircuitBreaker(threshold: 2, cooldown: .seconds(30))
        breaker.now = { clock.now }
        let script = ScriptedTransport([.status(503), .status(503), .status(200)])
        let server = try stubServer(script.transport) { $0.interceptors = [breaker] }
        for _ in 0..<2 { await #expect(throws: HTTPError.self) { try await Fetch(server: server).send() } }
        await #expect(throws: CircuitBreaker.CircuitOpen(host: "stub.example")) { try await Fetch(server: server).send() }
        #expect(script.requestCount == 2)
        clock.advance(by: .seconds(30))
        try await Fetch(server: server).send()
        #expect(script.requestCount == 3)
    }

    @Test func theObserverLogsOnlySlowExchanges() async throws {
        let lines = Locked<[String]>([])
        let server = try stubServer(.answering()) {
            $0.observers = [SlowExchangeLog(limit: .zero) { line in lines.withLock { $0.append(line) } },
                            SlowExchangeLog(limit: .seconds(3600)) { line in lines.withLock { $0.append("never: " + line) } }]
        }
        try await Fetch(server: server).send()
        #expect(lines.value.count == 1)
        #expect(lines.value.first?.hasPrefix("slow: GET /item → 200") == true)
    }

    @Test(.wire) func theMeterCountsADownloadToAFileAsItsWriterPullsIt() async throws {
        try await withTemporaryFolder { folder in
            let counted = Locked<[String: Int]>([:])
            let server = ConveyServer(remote: try TestServers.nginx(), configuration: ServerConfiguration(echoSink: { _ in }))
            server.configuration.exchangeInterceptors = [DownloadMeter { host, bytes in counted.withLock { $0[host, default: 0] += bytes } }]
            let file = try await Fetch(server: server, path: "200k.bin").download(to: folder.appending(path: "200k.bin"))
            #expect(try Data(contentsOf: file.payload).count == 200 << 10)
            #expect(counted.value == ["127.0.0.1": 200 << 10])
        }
    }

    @Test func theTeeCopiesAStreamAsItIsReadAndHearsItsEnd() async throws {
        let copied = Locked(Data())
        let ends = Locked<[String]>([])
        let body = Data((0..<(300 << 10)).map { UInt8($0 % 199) })
        let server = try stubServer(StubTransport { request in TransportResponse(url: request.request.url, body: body) }) {
            $0.exchangeInterceptors = [BodyTee(copy: { chunk in copied.withLock { $0.append(chunk) } },
                                               ended: { error in ends.withLock { $0.append(error.map { "\($0)" } ?? "whole") } })]
        }
        let response = try await Fetch(server: server).stream()
        var read = Data()
        for try await chunk in response.payload { read.append(chunk) }
        #expect(read == body)
        #expect(copied.value == body)
        #expect(ends.value == ["whole"])
    }
}
