import Foundation

/// How long a response without explicit freshness (no `max-age`, no `Expires`) stays fresh: a
/// fraction of the time since it was last modified, capped (RFC 9111 §4.2.2).
///
/// Applies only to statuses that are heuristically cacheable (200, 203, 204, 300, 301, 308, 404,
/// 405, 410, 414, 501) and to responses with a `Last-Modified`. Turned on per server with
/// `ServerConfiguration.usesHeuristicFreshness` (the standard one); answers it gives are
/// `CacheStatus.heuristicHit`. The tests try other fractions and caps.
struct HeuristicFreshness: Sendable, Hashable {
    /// The share of (`Date` − `Last-Modified`) a response stays fresh. Default: 0.1, as RFC 9111 suggests.
    var fraction: Double
    /// The longest heuristic lifetime, in seconds. Default: one day.
    var maximumLifetime: TimeInterval

    /// A heuristic; the defaults are RFC 9111's 10% with a one-day cap.
    init(fraction: Double = 0.1, maximumLifetime: TimeInterval = 86_400) {
        self.fraction = fraction
        self.maximumLifetime = maximumLifetime
    }

    /// 10% of the time since the last modification, at most one day.
    static let standard = HeuristicFreshness()

    /// The lifetime for a response last modified `sinceModified` seconds before it was generated.
    func lifetime(sinceModified: TimeInterval) -> TimeInterval {
        min(max(0, sinceModified * fraction), max(0, maximumLifetime))
    }
}
