import Foundation

/// A ready-made answer to `retryInterval(afterError:count:)`: bounded exponential backoff with
/// jitter, for transient failures of requests that are safe to repeat.
///
/// ```swift
/// struct FetchFeed: ServerTask {
///     var path: String { "feed" }
///     var retryPolicy: RetryPolicy? { .standard }
/// }
/// ```
///
/// The wait before attempt `n + 1` is `min(maxDelay, baseDelay × 2^(n-1))`, less up to `jitter` of
/// itself at random, so that many clients do not retry in step. A `Retry-After` header on a 429 or
/// 503 answer replaces the backoff; one asking for longer than `maxRetryAfter` ends the retries.
public struct RetryPolicy: Sendable, Hashable {
    /// The most attempts in all, the first one included. 1 means no retries.
    public var maxAttempts: Int
    /// The wait before the first retry.
    public var baseDelay: Duration
    /// The longest wait between attempts.
    public var maxDelay: Duration
    /// The fraction of each wait (0…1) taken off at random.
    public var jitter: Double
    /// Statuses worth another try. Default: 408, 425, 429, 500, 502, 503, 504.
    public var retryableStatusCodes: Set<Int>
    /// Whether POST, PATCH and other non-idempotent methods are retried too. Default: `false`,
    /// because repeating them may repeat their effect.
    public var retriesNonIdempotentMethods: Bool
    /// Whether a `Retry-After` header on 429 and 503 answers sets the wait.
    public var honoursRetryAfter: Bool
    /// The longest `Retry-After` wait accepted; a longer one ends the retries.
    public var maxRetryAfter: Duration

    /// Creates a policy; every parameter has the `standard` policy's default.
    public init(
        maxAttempts: Int = 3,
        baseDelay: Duration = .milliseconds(500),
        maxDelay: Duration = .seconds(30),
        jitter: Double = 0.2,
        retryableStatusCodes: Set<Int> = [408, 425, 429, 500, 502, 503, 504],
        retriesNonIdempotentMethods: Bool = false,
        honoursRetryAfter: Bool = true,
        maxRetryAfter: Duration = .seconds(60)
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.jitter = min(max(jitter, 0), 1)
        self.retryableStatusCodes = retryableStatusCodes
        self.retriesNonIdempotentMethods = retriesNonIdempotentMethods
        self.honoursRetryAfter = honoursRetryAfter
        self.maxRetryAfter = maxRetryAfter
    }

    /// Three attempts, 0.5 s then 1 s apart (less up to 20 % jitter), idempotent methods only.
    public static let standard = RetryPolicy()

    /// The seconds to wait before the next attempt, or `nil` to stop.
    ///
    /// - Parameters:
    ///   - error: why the last attempt failed.
    ///   - count: how many attempts have been made.
    ///   - method: the request's method.
    ///   - now: the current time, for `Retry-After` dates.
    public func retryInterval(afterError error: any Error, count: Int, method: HTTPMethod, now: Date = Date()) -> TimeInterval? {
        guard count < maxAttempts, method.isIdempotent || retriesNonIdempotentMethods, isTransient(error) else { return nil }
        if honoursRetryAfter, let http = error as? HTTPError, http.statusCode == 429 || http.statusCode == 503,
           let header = http.header("Retry-After") {
            guard let wait = RetryAfter.seconds(from: header, now: now) else { return backoff(count: count) }
            return wait <= maxRetryAfter.timeInterval ? wait : nil
        }
        return backoff(count: count)
    }

    /// Whether a failure may go away by itself: a retryable status, an attempt timeout, or a
    /// transport failure of a transient kind (`TransportFailure`): `cannotConnect`,
    /// `connectionLost` and `notResent`. A TLS failure, a malformed or oversized answer and a
    /// refused redirect would only happen again.
    public func isTransient(_ error: any Error) -> Bool {
        switch error {
        case let http as HTTPError:
            return retryableStatusCodes.contains(http.statusCode)
        case ConveyError.attemptTimedOut:
            return true
        case ConveyError.transport(let failure, _, _, _):
            return Self.transientTransportKinds.contains(failure)
        default:
            return false
        }
    }

    private func backoff(count: Int) -> TimeInterval {
        let exponent = Double(max(count - 1, 0))
        let delay = min(maxDelay.timeInterval, baseDelay.timeInterval * pow(2, min(exponent, 62)))
        return delay - delay * jitter * Double.random(in: 0...1)
    }

    /// Failures of the connection rather than of the request or the server's answer. `notResent`
    /// is one too: only a policy that retries non-idempotent methods ever sees it retried.
    private static let transientTransportKinds: Set<TransportFailure> = [.cannotConnect, .connectionLost, .notResent]
}
