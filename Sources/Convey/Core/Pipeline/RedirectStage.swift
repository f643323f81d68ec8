import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Follows redirects for every delivery (memory, file, stream): the one place a redirect chain
/// is walked, with the one policy (`Redirect`). Transports never follow: each hop is a send of
/// its own, so cookies set by a hop go out with the next and each hop can be answered by the cache.
///
/// A hop that redirects never reaches the delivery's sink: its body is read and dropped, up to
/// `discardedBodyLimit` bytes (a longer one ends that hop's transfer), and the next hop is sent.
/// The sink sees only the final response. Each followed hop is echoed and recorded like an
/// attempt (`CacheExchangeReporter`). A delivery that uses the cache (`SendOptions.answersFromCache`)
/// has each hop go through it, so a stored permanent redirect answers without the network; there
/// a redirect's body is held within the task's size limit, as any response the cache may store.
@ConveyActor
struct RedirectStage {
    /// Sends one hop to the transport: its request, its body file and the sink for its response.
    typealias SendHop = @ConveyActor (OutgoingRequest, URL?, any ResponseBodySink) async throws -> ExchangeMetrics

    /// The task's `followsRedirects`: when `false`, a redirect is the response.
    private let follows: Bool
    /// The server's `maximumRedirects`.
    private let maximumRedirects: Int
    /// The credential fields beyond the standard ones, dropped on a hop to another origin.
    private let credentials: Redaction
    /// The body size limit of a response the cache takes in.
    private let sizeLimit: Int64?
    private let cache: CacheCoordinator
    private let reporter: CacheExchangeReporter
    /// The attempt the hops belong to, as echo and records number it.
    private let attemptNumber: Int

    /// How much of a redirect's body is read and dropped before its transfer is ended instead.
    nonisolated static var discardedBodyLimit: Int { 64 * 1024 }

    /// The stage for attempt `attemptNumber` of a run of `task` against `server`.
    init<Task: DownloadingTask>(task: Task, server: ConveyServer, attemptNumber: Int) {
        follows = task.followsRedirects
        maximumRedirects = server.configuration.maximumRedirects
        credentials = server.configuration.redaction
        sizeLimit = task.configuration?.maximumResponseSize ?? server.configuration.maximumResponseSize
        cache = CacheCoordinator(task: task, server: server)
        reporter = CacheExchangeReporter(task: task, server: server)
        self.attemptNumber = attemptNumber
    }

    /// Sends `request` (with `bodyFile` as its body, if any) through `send`, following redirects,
    /// and delivers the final response to `sink`. Returns the final hop's request as sent.
    func send(_ request: OutgoingRequest, bodyFile: URL?, into sink: any ResponseBodySink, options: SendOptions,
              hop send: @escaping SendHop) async throws -> SentExchange {
        var hopRequest = request
        var hopBodyFile = bodyFile
        var followed = 0
        while true {
            let startedAt = Date()
            options.sendingHop?(hopRequest)
            let hop = options.answersFromCache
                ? try await throughCache(hopRequest, bodyFile: hopBodyFile, into: sink, send: send)
                : try await direct(hopRequest, bodyFile: hopBodyFile, into: sink, send: send)
            switch hop {
            case .final(let sent):
                return sent
            case .redirect(let next, let sent, let response, let status):
                await reporter.report(sent, .success(response), status: status, startedAt: startedAt, until: Date(), attemptNumber: attemptNumber)
                followed += 1
                guard followed <= maximumRedirects else { throw Redirect.tooMany(limit: maximumRedirects, from: request.url) }
                hopRequest = next.request
                if !next.resendsBody { hopBodyFile = nil }
            }
        }
    }

    /// How one hop ended.
    private enum HopOutcome {
        /// The response went to the delivery's sink.
        case final(SentExchange)
        /// A redirect to follow: the next hop, the request as sent, what came back (for echo) and where from.
        case redirect(Redirect.Hop, sent: OutgoingRequest, response: TransportResponse, status: CacheStatus)
    }

    /// The next hop after `head`, or `nil` when the response is final.
    private func next(after head: ResponseHead, request: OutgoingRequest) throws(ConveyError) -> Redirect.Hop? {
        guard follows else { return nil }
        return try Redirect.next(after: head, request: request, credentials: credentials)
    }

    /// One hop answered by the cache, the network through it, or both.
    private func throughCache(_ request: OutgoingRequest, bodyFile: URL?, into sink: any ResponseBodySink,
                              send: @escaping SendHop) async throws -> HopOutcome {
        let answer = try await cache.respond(to: request) { [sizeLimit] sending in
            let body = InMemoryBody(limit: sizeLimit, url: sending.url)
            let metrics = try await send(sending, bodyFile, body)
            return try body.response(metrics: metrics)
        }
        if let hop = try next(after: answer.response.head, request: request) {
            return .redirect(hop, sent: answer.request, response: answer.received ?? answer.response, status: answer.status)
        }
        if let memory = sink as? InMemoryBody {
            // Already in memory, within the same limit: handed over without a copy.
            memory.adopt(answer.response)
        } else {
            try await sink.deliver(answer.response)
        }
        return .final(SentExchange(request: answer.request, metrics: answer.response.metrics, cacheStatus: answer.status))
    }

    /// One hop straight to the transport, a redirect's head and body kept from the sink.
    private func direct(_ request: OutgoingRequest, bodyFile: URL?, into sink: any ResponseBodySink,
                        send: SendHop) async throws -> HopOutcome {
        let interceptor = RedirectInterceptor(sink: sink) { [follows, credentials] head throws(ConveyError) in
            follows ? try Redirect.next(after: head, request: request, credentials: credentials) : nil
        }
        let metrics: ExchangeMetrics
        do {
            metrics = try await send(request, bodyFile, interceptor)
        } catch {
            // A redirect whose body was too long to drop ended its own transfer: follow it all the same.
            guard let redirect = interceptor.redirect, interceptor.endedLongBody else { throw error }
            return .redirect(redirect.hop, sent: request, response: TransportResponse(head: redirect.head, data: Data()), status: .network)
        }
        if let redirect = interceptor.redirect {
            return .redirect(redirect.hop, sent: request, response: TransportResponse(head: redirect.head, data: Data(), metrics: metrics),
                             status: .network)
        }
        return .final(SentExchange(request: request, metrics: metrics, cacheStatus: .network))
    }
}

/// What one send gave the delivery, besides what went to its sink.
struct SentExchange: Sendable {
    /// The final hop's request as sent (with any headers the cache added).
    var request: OutgoingRequest
    /// What the final hop cost on the wire.
    var metrics: ExchangeMetrics
    /// Whether the cache took part in the final hop.
    var cacheStatus: CacheStatus = .network
}

/// Stands between a transport and the delivery's sink for one hop: a head the stage follows
/// (and that hop's body) stops here; anything else goes through untouched.
private final class RedirectInterceptor: ResponseBodySink, @unchecked Sendable {
    typealias Decide = @Sendable (ResponseHead) throws(ConveyError) -> Redirect.Hop?

    private let lock = NSLock()
    private let sink: any ResponseBodySink
    private let decide: Decide
    private var followed: (hop: Redirect.Hop, head: ResponseHead)?
    private var discarded = 0
    private var endedBody = false

    init(sink: any ResponseBodySink, decide: @escaping Decide) {
        self.sink = sink
        self.decide = decide
    }

    /// The redirect this hop answered with, when the stage follows it.
    var redirect: (hop: Redirect.Hop, head: ResponseHead)? { lock.withLock { followed } }
    /// Whether this sink ended the transfer because the redirect's body passed `discardedBodyLimit`.
    var endedLongBody: Bool { lock.withLock { endedBody } }

    /// Thrown from `offer` to end a redirect's transfer whose body is too long to drop.
    private struct LongRedirectBody: Error {}

    func receive(_ head: ResponseHead) throws {
        if let hop = try decide(head) {
            lock.withLock { followed = (hop, head) }
        } else {
            try sink.receive(head)
        }
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        let dropping = try lock.withLock {
            guard followed != nil else { return false }
            discarded += bytes.count
            if discarded > RedirectStage.discardedBodyLimit {
                endedBody = true
                throw LongRedirectBody()
            }
            return true
        }
        return try dropping || sink.offer(bytes)
    }

    func whenReady(_ resume: @escaping @Sendable () -> Void) {
        if redirect != nil { resume() } else { sink.whenReady(resume) }
    }

    var needsBackPressure: Bool { sink.needsBackPressure }
}
