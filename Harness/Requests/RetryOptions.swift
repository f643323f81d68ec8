@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// `--retry N` and its companions, with curl's meaning: up to N more attempts after a transient
/// failure (a timeout, or HTTP 408, 429, 500, 502, 503 or 504), waiting 1 s, then 2 s, 4 s … (at
/// most 10 minutes), or `--retry-delay` each time, or what a 429's or 503's `Retry-After` asks.
struct RetryOptions: Sendable {
    static let options: [OptionSpec] = [.retry, .retryDelay, .retryAllErrors]

    /// The statuses curl retries.
    static let retriedStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// The longest wait between attempts, as curl's.
    private static let longestWait = 600.0

    /// How many retries at most.
    let count: Int
    /// A fixed wait instead of the doubling one (zero: none).
    let delay: Duration?
    /// Whether every failure is retried, not only the transient ones.
    let retriesAllErrors: Bool

    /// The options given, or `nil` without `--retry` (or with `--retry 0`).
    init?(_ arguments: ParsedArguments, command: String) throws(UsageError) {
        guard let text = arguments.value(.retry) else {
            if arguments.has(.retryDelay) || arguments.has(.retryAllErrors) {
                throw UsageError(message: "--retry-delay and --retry-all-errors need --retry N", command: command)
            }
            return nil
        }
        guard let count = Int(text), (0...1000).contains(count) else {
            throw UsageError(message: "--retry: '\(text)' is not a number of retries from 0 to 1000", command: command)
        }
        guard count > 0 else { return nil }
        self.count = count
        delay = try arguments.value(.retryDelay).map { text throws(UsageError) in
            // 0 retries at once, as curl's does.
            try RequestOptions.seconds(text, option: "--retry-delay", command: command, allowingZero: true)
        }
        retriesAllErrors = arguments.has(.retryAllErrors)
    }

    /// Seconds to wait before the next attempt, or `nil` to stop: `count` attempts failed so far,
    /// the last with `error`.
    func interval(after error: any Error, count attempts: Int, method: HTTPMethod) -> TimeInterval? {
        guard attempts <= count, !error.isCancellation, retriesAllErrors || Self.isTransient(error) else { return nil }
        let wait = delay.map { $0 / .seconds(1) } ?? min(Self.longestWait, pow(2, Double(attempts - 1)))
        guard let http = error as? HTTPError, http.statusCode == 429 || http.statusCode == 503 else { return wait }
        // Convey's retry policy reads `Retry-After` (seconds or a date); its backoff here is the wait above.
        let policy = RetryPolicy(maxAttempts: attempts + 1, baseDelay: .seconds(wait), maxDelay: .seconds(wait), jitter: 0,
                                 retryableStatusCodes: [429, 503], retriesNonIdempotentMethods: true, honoursRetryAfter: true,
                                 maxRetryAfter: .seconds(Self.longestWait))
        return policy.retryInterval(afterError: http, count: attempts, method: method)
    }

    /// What curl calls transient: a retried status, or a timeout.
    private static func isTransient(_ error: any Error) -> Bool {
        if let http = error as? HTTPError { return retriedStatuses.contains(http.statusCode) }
        if case .attemptTimedOut? = error as? ConveyError { return true }
        return false
    }
}

extension OptionSpec {
    static let retry = OptionSpec(["--retry"], value: "NUM", curl: .same,
                                  help: "retry a timeout or HTTP 408, 429, 500, 502, 503, 504 up to NUM times (waits 1 s, 2 s, 4 s …)")
    static let retryDelay = OptionSpec(["--retry-delay"], value: "SECONDS", curl: .same, help: "with --retry: wait this long before each retry (0: retry at once)")
    static let retryAllErrors = OptionSpec(["--retry-all-errors"], curl: .same, help: "with --retry: retry every failure, not only transient ones")
}
