import Foundation

extension Outbox {
    /// How an outbox delivers and what it holds.
    public struct Configuration: Sendable {
        /// How many items are sent at once. Default: 1, one after another in enqueue order, so a
        /// later request never overtakes an earlier one (the first waits out its retries before
        /// the second is sent). More lets items go out of order.
        public var concurrency: Int
        /// When a failed attempt is tried again. Default: `standardRetryPolicy`. A failure to
        /// connect at all (no network) never counts toward `maxAttempts`: the outbox backs off
        /// (up to `maxDelay`) until the network is back or the item expires.
        public var retryPolicy: RetryPolicy
        /// How long an item may stay pending, from its enqueue (or its last `retry`), before it
        /// fails with `ConveyError.expired`. Default: 7 days. `nil`: never.
        public var expiry: Duration?
        /// The most pending and failed items the folder may hold. Default: 10,000.
        public var maximumItems: Int
        /// The most bytes the request files of pending and failed items may take. Default: 256 MiB.
        public var maximumBytes: Int64
        /// The largest request body an item may have; bodies are held in memory while sent. Default: 16 MiB.
        public var maximumBodySize: Int64
        /// The largest response body a delivery accepts and keeps (up to 64 MiB); a larger one
        /// fails the item with `ConveyError.responseTooLarge`. Default: 1 MiB.
        public var maximumResponseSize: Int64
        /// How long delivered items stay in the folder before the outbox removes them. Default:
        /// a day. `nil`: until dropped.
        public var deliveredRetention: Duration?
        /// The header field that carries each item's key. Default: `Idempotency-Key`.
        public var idempotencyKeyField: String
        /// What the outbox reads the time from and waits on: the system clock, or in tests one moved by hand.
        var clock: any OutboxClock = SystemOutboxClock()

        /// Creates a configuration; every parameter has the documented default.
        public init(concurrency: Int = 1, retryPolicy: RetryPolicy = Configuration.standardRetryPolicy,
                    expiry: Duration? = .seconds(7 * 24 * 3600), maximumItems: Int = 10_000,
                    maximumBytes: Int64 = 256 << 20, maximumBodySize: Int64 = 16 << 20,
                    maximumResponseSize: Int64 = 1 << 20, deliveredRetention: Duration? = .seconds(24 * 3600),
                    idempotencyKeyField: String = "Idempotency-Key") {
            self.concurrency = max(1, concurrency)
            self.retryPolicy = retryPolicy
            self.expiry = expiry
            self.maximumItems = max(0, maximumItems)
            self.maximumBytes = max(0, maximumBytes)
            self.maximumBodySize = max(0, maximumBodySize)
            self.maximumResponseSize = min(max(0, maximumResponseSize), OutboxFolder.maximumKeptResponseSize)
            self.deliveredRetention = deliveredRetention
            self.idempotencyKeyField = idempotencyKeyField
        }

        /// The outbox's default retries. An item's key makes it safe to repeat whatever its
        /// method, so POST is retried as GET is: after a lost connection, a timeout, 408, 425,
        /// 429 and every 5xx; 10 attempts, 1 s doubling to 5 minutes apart (less up to 20 %
        /// jitter); `Retry-After` honoured up to a day.
        public static let standardRetryPolicy = RetryPolicy(
            maxAttempts: 10, baseDelay: .seconds(1), maxDelay: .seconds(300), jitter: 0.2,
            retryableStatusCodes: Set([408, 425, 429] + Array(500...599)), retriesNonIdempotentMethods: true,
            honoursRetryAfter: true, maxRetryAfter: .seconds(24 * 3600))
    }
}

/// Time as the outbox sees it: wall-clock dates, since retry times are stored and must mean the
/// same after a restart. An input, so retry and expiry rules are tested without waiting.
protocol OutboxClock: Sendable {
    /// The current date.
    var now: Date { get }
    /// Returns at `date`; throws `CancellationError` when the calling task is cancelled first.
    func sleep(until date: Date) async throws
}

/// The system clock.
struct SystemOutboxClock: OutboxClock {
    var now: Date { Date() }

    func sleep(until date: Date) async throws {
        let seconds = date.timeIntervalSinceNow
        if seconds > 0 { try await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up)))) }
    }
}
