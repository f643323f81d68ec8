import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Follows redirects, for every delivery and transport: the one place a redirect chain is walked,
/// with the one policy (`Redirect`). Transports never follow: each hop is a request of its own
/// through the steps below, so cookies set by a hop go out with the next, each hop can be answered
/// by the cache, and the app's exchange steps see each hop as it goes out.
///
/// A hop that redirects never goes up: its body is dropped (up to `Redirect.discardedBodyLimit`
/// bytes; a longer one ends that hop's transfer) and the next hop is sent. The steps above see
/// only the final response. The run's observers hear of each followed hop
/// (`RunEvent.Kind.redirectFollowed`), which echo and recording show like an attempt.
struct RedirectStep: ChainStep {
    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        let policy = context.plan.redirects
        // A run that does not follow redirects has nothing to do here.
        guard policy.follows else { return try await next(request, context) }
        let firstURL = request.request.url
        var current = request
        var followed = 0
        while true {
            let startedAt = Date()
            let clock = ContinuousClock.now
            let exchange = try await next(current, context)
            let redirect: Redirect.Hop?
            do {
                redirect = try Redirect.next(after: exchange.head, request: current.request, credentials: policy.credentials)
            } catch {
                exchange.body.close()
                throw error
            }
            guard let redirect else { return exchange }
            await exchange.body.discard(upTo: Redirect.discardedBodyLimit)
            if context.isObserved {
                var hop = exchange
                hop.body = .empty
                hop.startedAt = startedAt
                hop.duration = clock.duration(to: .now)
                hop.attemptNumber = context.attempt
                await context.emit(.redirectFollowed(ServerResponse(payload: Data(), exchange: hop)))
            }
            followed += 1
            guard followed <= policy.maximum else { throw Redirect.tooMany(limit: policy.maximum, from: firstURL) }
            current.request = redirect.request
            if !redirect.resendsBody { current.bodyFile = nil }
        }
    }
}
