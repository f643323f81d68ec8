import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One stage between a run and the wire. Every stage has the same shape: a hop's request in, the
/// response into a sink, what was sent out. Stages are values assembled once per run from its
/// `RunPlan`; each knows only the next one, never the runner.
protocol ExchangeStage: Sendable {
    /// Sends `hop`, delivering the response to `sink`, and returns the request as sent and what
    /// the exchange cost.
    func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext) async throws -> SentExchange
}

/// One request on its way: the request and the file its body streams from, if any.
struct Hop: Sendable {
    var request: OutgoingRequest
    var bodyFile: URL?
}

/// What one send gave the delivery, besides what went to its sink.
struct SentExchange: Sendable {
    /// The final hop's request as sent (with any fields the cache added).
    var request: OutgoingRequest
    /// What the final hop cost on the wire.
    var metrics: ExchangeMetrics
    /// Whether the cache took part in the final hop.
    var cacheStatus: CacheStatus = .network
}

/// What the hops of one attempt share.
struct AttemptContext: Sendable {
    /// The run's plan.
    let plan: RunPlan
    /// The attempt's number, as echo and records show it.
    let number: Int
    /// How the run's stops reach the exchange.
    var cancellation: ExchangeCancellation
    /// Whether the body may be large (a download, a stream): a transport reads it in large pieces.
    var expectsLargeBody = false
    /// Told each hop's request as it goes out: how a stream, which has its head before the send
    /// returns, learns which request the final response answers.
    var hopObserver: HopObserver?
}

/// Learns each hop's request as it goes out.
final class HopObserver: @unchecked Sendable {
    private let lock = NSLock()
    private var latest: OutgoingRequest?

    /// The last hop's request sent so far.
    var request: OutgoingRequest? { lock.withLock { latest } }

    func sending(_ request: OutgoingRequest) {
        lock.withLock { latest = request }
    }
}

/// The last stage: the server's transport.
///
/// A transport that registers its own cancellation with the run (`ExchangeCancellation`) runs in
/// the run's task, with no thread or task of its own; any other runs in a task of its own that
/// the run's stop cancels, since cancellation of its task is all such a transport hears.
struct TransportStage: ExchangeStage {
    func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext) async throws -> SentExchange {
        let plan = attempt.plan
        var request = TransportRequest(
            request: hop.request, bodyFile: hop.bodyFile, timeout: plan.idleTimeout,
            allowsExpensiveNetworkAccess: plan.allowsExpensiveNetworkAccess,
            allowsConstrainedNetworkAccess: plan.allowsConstrainedNetworkAccess,
            progress: plan.uploadProgress?.transportHandler)
        request.maximumResponseHeadSize = plan.headSizeLimit
        request.expectsLargeBody = attempt.expectsLargeBody
        request.cancellation = attempt.cancellation
        let transport = plan.transport(forAttempt: attempt.number)
        let metrics: ExchangeMetrics
        if transport.registersExchangeCancellation || attempt.cancellation.run == nil {
            metrics = try await transport.send(request, into: sink)
        } else {
            metrics = try await attempt.cancellation.inTaskOfItsOwn { [request] in try await transport.send(request, into: sink) }
        }
        return SentExchange(request: hop.request, metrics: metrics)
    }
}

/// The stages of a run, assembled once from its plan: redirects, then the cache when the run
/// uses one, then the transport.
enum ExchangeChain: Sendable {
    case direct(RedirectStage<TransportStage>)
    case cached(RedirectStage<CacheStage<TransportStage>>)

    init(plan: RunPlan) {
        if let cache = plan.cache {
            self = .cached(RedirectStage(next: CacheStage(policy: cache, next: TransportStage())))
        } else {
            self = .direct(RedirectStage(next: TransportStage()))
        }
    }

    /// Sends `hop` through every stage into `sink`.
    func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext) async throws -> SentExchange {
        switch self {
        case .direct(let stages): try await stages.send(hop, into: sink, attempt: attempt)
        case .cached(let stages): try await stages.send(hop, into: sink, attempt: attempt)
        }
    }
}
