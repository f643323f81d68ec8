import Foundation

/// What time it is for a cache: every freshness judgement, the times stored with a response and
/// the use times the disk tier evicts by come from here, so tests can move time instead of waiting.
///
/// ```swift
/// let cache = DataCache(clock: .system)                       // the default
/// let cache = DataCache(clock: CacheClock { fixedDate })      // in a test
/// ```
public struct CacheClock: Sendable {
    /// The current instant.
    public let now: @Sendable () -> Date

    /// A clock reading `now`.
    public init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The system's wall clock.
    public static let system = CacheClock { Date() }
}
