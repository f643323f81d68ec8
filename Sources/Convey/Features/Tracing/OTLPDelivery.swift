import Foundation

/// Posts OTLP bodies of one signal (spans or metrics) with the retries the OTLP specification asks
/// for: after 429, 502, 503, 504 and network failures, waiting the collector's `Retry-After` (at
/// most a minute) or backing off exponentially from a second, at most `maximumTries` tries. A
/// shutdown cuts the wait short: the body gets one last try.
final class OTLPDelivery: Sendable {
    let sender: OTLPSender
    private let retryWait: @Sendable (Duration) async throws -> Void
    /// The wait before a body's next try, which a shutdown cuts short.
    private let currentWait = Locked<Task<Void, any Error>?>(nil)
    /// Set by a shutdown: no body waits to be tried again from then on.
    private let triesOnce = Locked(false)

    /// The most tries of one body, and the longest wait between two.
    static let maximumTries = 5
    static let longestWait = Duration.seconds(60)

    init(sender: OTLPSender, retryWait: @escaping @Sendable (Duration) async throws -> Void) {
        self.sender = sender
        self.retryWait = retryWait
    }

    /// From now on every body gets one try, and a body waiting to be tried again is tried at once, one last time.
    func stopRetrying() {
        triesOnce.value = true
        currentWait.value?.cancel()
    }

    /// Posts `body`, trying again as the specification says unless `once`; whether the collector took it.
    func deliver(_ body: Data, once: Bool) async -> Bool {
        var tries = 1
        while true {
            switch await sender.post(body) {
            case .delivered: return true
            case .rejected: return false
            case .retry(let after):
                guard !once, tries < Self.maximumTries, !Task.isCancelled, !triesOnce.value else { return false }
                let backoff = Duration.seconds(1 << (tries - 1))
                let wait = Task { [retryWait] in try await retryWait(min(after ?? backoff, Self.longestWait)) }
                currentWait.value = wait
                if triesOnce.value { wait.cancel() }
                do {
                    try await wait.value
                    tries += 1
                } catch {
                    // A shutdown cut the wait short: one last try.
                    guard !Task.isCancelled else { return false }
                    tries = Self.maximumTries
                }
                currentWait.value = nil
            }
        }
    }
}
