import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One stage between a run and the wire. Every stage has the same shape: a hop's request in, the
/// response into a sink, what was sent out; each passes the hop on to the rest of the chain
/// (`next`), or answers it itself. Stages are values, assembled once per run from its `RunPlan`.
protocol ExchangeStage: Sendable {
    /// Sends `hop` (through `next`, or not), delivering the response to `sink`, and returns the
    /// request as sent and what the exchange cost.
    func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext, next: ExchangeChain.Rest) async throws -> SentExchange
}

/// One request on its way: the request, the file its body streams from, and who hears how far it got.
struct Hop: Sendable {
    var request: OutgoingRequest
    var bodyFile: URL?
    /// Told as bytes go out and come in, from the transport's thread: it must hand off at once.
    var progress: (@Sendable (TransferProgress) -> Void)?
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

    /// Tells the run's observers that `kind` happened in this attempt.
    func emit(_ kind: @autoclosure () -> RunEvent.Kind, wire: WireDetail? = nil) async {
        await plan.observers.emit(kind(), attempt: number, wire: wire)
    }
}

/// Learns each hop's request as it goes out.
final class HopObserver: Sendable {
    private let latest = InlineLocked<OutgoingRequest?>(nil)

    /// The last hop's request sent so far.
    var request: OutgoingRequest? { latest.value }

    func sending(_ request: OutgoingRequest) {
        latest.set(request)
    }
}

/// The stages of a run, assembled once from its plan: redirects, the features' stages (the
/// cache, upload progress), the app's steps around each exchange, the stages nearest the wire
/// (a HAR file's answers), then the transport.
struct ExchangeChain: Sendable {
    private let stages: [any ExchangeStage]

    init(plan: RunPlan) {
        var stages: [any ExchangeStage] = [RedirectStage()]
        stages += plan.parts.featureStages
        if !plan.parts.exchangeSteps.isEmpty { stages.append(InterceptorStage(steps: plan.parts.exchangeSteps)) }
        stages += plan.parts.wireStages
        self.stages = stages
    }

    /// Sends `hop` through every stage into `sink`.
    func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext) async throws -> SentExchange {
        try await Rest(stages: stages[...]).send(hop, into: sink, attempt: attempt)
    }

    /// The stages after one, ending with the transport.
    struct Rest: Sendable {
        fileprivate let stages: ArraySlice<any ExchangeStage>

        /// Sends `hop` through the rest of the chain into `sink`.
        func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext) async throws -> SentExchange {
            guard let stage = stages.first else { return try await TransportStage.send(hop, into: sink, attempt: attempt) }
            return try await stage.send(hop, into: sink, attempt: attempt, next: Rest(stages: stages.dropFirst()))
        }
    }
}

/// The last stage: the server's transport, and the exchange on the wire as the run's observers see it.
///
/// A transport that registers its own cancellation with the run (`ExchangeCancellation`) runs in
/// the run's task, with no thread or task of its own; any other runs in a task of its own that
/// the run's stop cancels, since cancellation of its task is all such a transport hears.
enum TransportStage {
    static func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext) async throws -> SentExchange {
        let plan = attempt.plan
        var request = TransportRequest(
            request: hop.request, bodyFile: hop.bodyFile, timeout: plan.idleTimeout,
            allowsExpensiveNetworkAccess: plan.allowsExpensiveNetworkAccess,
            allowsConstrainedNetworkAccess: plan.allowsConstrainedNetworkAccess,
            progress: hop.progress)
        request.maximumResponseHeadSize = plan.headSizeLimit
        request.expectsLargeBody = attempt.expectsLargeBody
        request.cancellation = attempt.cancellation
        let transport = plan.transport
        if plan.observers.isEmpty {
            return SentExchange(request: hop.request, metrics: try await send(request, over: transport, into: sink, attempt: attempt))
        }
        // Watched: the observers hear of the exchange from here, in the task that sends it.
        let startedAt = Date()
        let clock = ContinuousClock.now
        await attempt.emit(.requestSent(hop.request), wire: WireDetail(request: hop.request, bodyFile: hop.bodyFile, startedAt: startedAt))
        let watching = WatchedSink(sink, keeping: plan.parts.observedBodyLimit)
        var detail = WireDetail(request: hop.request, bodyFile: hop.bodyFile, startedAt: startedAt)
        do {
            let metrics = try await send(request, over: transport, into: watching, attempt: attempt)
            let seen = watching.seen
            (detail.keptBody, detail.bodyBytes, detail.elapsed) = (seen.body, seen.bytes, clock.duration(to: .now))
            if let head = seen.head {
                await attempt.emit(.responseReceived(head), wire: detail)
                let exchange = Exchange(request: hop.request, head: head, body: Data(), metrics: metrics, startedAt: startedAt,
                                        duration: detail.elapsed, attemptNumber: attempt.number)
                await attempt.emit(.bodyFinished(ServerResponse(payload: Data(), exchange: exchange)), wire: detail)
            }
            return SentExchange(request: hop.request, metrics: metrics)
        } catch {
            let seen = watching.seen
            (detail.keptBody, detail.bodyBytes, detail.elapsed, detail.endedBySink) = (seen.body, seen.bytes, clock.duration(to: .now), seen.sinkFailed)
            if let head = seen.head { await attempt.emit(.responseReceived(head), wire: detail) }
            await attempt.emit(.exchangeFailed(TransportErrors.map(error, url: hop.request.url, timeout: plan.idleTimeout)), wire: detail)
            throw error
        }
    }

    private static func send(_ request: TransportRequest, over transport: any ConveyTransport, into sink: any ResponseBodySink,
                              attempt: AttemptContext) async throws -> ExchangeMetrics {
        if transport.registersExchangeCancellation || attempt.cancellation.run == nil {
            return try await transport.send(request, into: sink)
        }
        return try await attempt.cancellation.inTaskOfItsOwn { [request] in try await transport.send(request, into: sink) }
    }
}
