import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Follows redirects for every delivery (memory, file, stream): the one place a redirect chain
/// is walked, with the one policy (`Redirect`). Transports never follow: each hop is a send of
/// its own through the next stages, so cookies set by a hop go out with the next and each hop can
/// be answered by the cache.
///
/// A hop that redirects never reaches the delivery's sink: its body is read and dropped, up to
/// `Redirect.discardedBodyLimit` bytes (a longer one ends that hop's transfer), and the next hop is sent.
/// The sink sees only the final response. The run's observers hear of each followed hop
/// (`RunEvent.Kind.redirectFollowed`), which echo and recording show like an attempt. Through the
/// cache, a redirect's body is held within the run's size limit, as any response the cache may store.
struct RedirectStage: ExchangeStage {
    func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext, next: ExchangeChain.Rest) async throws -> SentExchange {
        let policy = attempt.plan.redirects
        // A run that does not follow redirects has nothing to intercept.
        guard policy.follows else {
            attempt.hopObserver?.sending(hop.request)
            return try await next.send(hop, into: sink, attempt: attempt)
        }
        let firstURL = hop.request.url
        var current = hop
        var followed = 0
        while true {
            let startedAt = Date()
            attempt.hopObserver?.sending(current.request)
            let interceptor = RedirectInterceptor(sink: sink, request: current.request, credentials: policy.credentials)
            let sent: SentExchange
            do {
                sent = try await next.send(current, into: interceptor, attempt: attempt)
            } catch {
                // A redirect whose body was too long to drop ended its own transfer: follow it all the same.
                guard interceptor.redirect != nil, interceptor.endedLongBody else { throw error }
                sent = SentExchange(request: current.request, metrics: ExchangeMetrics())
            }
            guard let redirect = interceptor.redirect else { return sent }
            let hopExchange = Exchange(request: sent.request, head: redirect.head, body: Data(), metrics: sent.metrics,
                                       cacheStatus: sent.cacheStatus, startedAt: startedAt,
                                       duration: .seconds(Date().timeIntervalSince(startedAt)), attemptNumber: attempt.number)
            await attempt.emit(.redirectFollowed(ServerResponse(payload: Data(), exchange: hopExchange)))
            followed += 1
            guard followed <= policy.maximum else { throw Redirect.tooMany(limit: policy.maximum, from: firstURL) }
            current.request = redirect.hop.request
            if !redirect.hop.resendsBody { current.bodyFile = nil }
        }
    }
}

/// Stands between the next stage and the delivery's sink for one hop: a head the stage follows
/// (and that hop's body) stops here; anything else goes through untouched.
private final class RedirectInterceptor: ResponseBodySink {
    private let sink: any ResponseBodySink
    private let request: OutgoingRequest
    private let credentials: Redaction
    private let state = InlineLocked(State())

    private struct State: Sendable {
        var followed: (hop: Redirect.Hop, head: ResponseHead)?
        var discarded = 0
        var endedBody = false
    }

    init(sink: any ResponseBodySink, request: OutgoingRequest, credentials: Redaction) {
        self.sink = sink
        self.request = request
        self.credentials = credentials
    }

    /// The redirect this hop answered with, when the stage follows it.
    var redirect: (hop: Redirect.Hop, head: ResponseHead)? { state.value.followed }
    /// Whether this sink ended the transfer because the redirect's body passed `Redirect.discardedBodyLimit`.
    var endedLongBody: Bool { state.value.endedBody }

    /// Thrown from `offer` to end a redirect's transfer whose body is too long to drop.
    private struct LongRedirectBody: Error {}

    func receive(_ head: ResponseHead) throws {
        if let hop = try Redirect.next(after: head, request: request, credentials: credentials) {
            state.withLock { $0.followed = (hop, head) }
        } else {
            try sink.receive(head)
        }
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        let dropping = try state.withLock { state in
            guard state.followed != nil else { return false }
            state.discarded += bytes.count
            if state.discarded > Redirect.discardedBodyLimit {
                state.endedBody = true
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

extension RedirectInterceptor: WholeResponseSink {
    /// A redirect the stage follows, its body dropped; else what the sink behind holds.
    var held: (head: ResponseHead, body: Data)? {
        if let redirect { return (redirect.head, Data()) }
        return (sink as? any WholeResponseSink)?.held
    }

    func take(_ response: TransportResponse) async throws {
        try receive(response.head)
        if redirect == nil { try await sink.takeWhole(response) }
    }
}
