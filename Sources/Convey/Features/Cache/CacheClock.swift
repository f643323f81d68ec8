import Foundation

/// What time it is for a cache: every freshness judgement, the times stored with a response and
/// the use times the disk tier evicts by come from here, so tests can move time instead of
/// waiting (`DataCache(clock:)`, through `@testable import`).
struct CacheClock: Sendable {
    /// The current instant.
    let now: @Sendable () -> Date

    /// A clock reading `now`.
    init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The system's wall clock.
    static let system = CacheClock { Date() }
}
