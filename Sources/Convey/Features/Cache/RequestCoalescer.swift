import Foundation

/// Shares one exchange among identical requests in flight: the first caller starts it, later
/// callers with the same key join it, and every caller gets its outcome.
///
/// The exchange runs in a task of its own, so it belongs to no single caller: a caller whose task
/// is cancelled (by its own caller, or by its run's tag or total timeout, which cancel the
/// attempt's task) stops waiting at once with a cancellation error, and the exchange goes on
/// while others still wait; when the last waiter leaves, the exchange's task is cancelled. A
/// failure reaches every waiter.
final class RequestCoalescer: @unchecked Sendable {
    /// One shared exchange and the callers waiting for it.
    private final class Exchange: @unchecked Sendable {
        /// Callers still waiting, registered or about to be.
        var active: Set<Int> = []
        var waiters: [Int: CheckedContinuation<CacheAnswer, any Error>] = [:]
        /// Waiters that left before they were registered.
        var departed: Set<Int> = []
        var outcome: Result<CacheAnswer, any Error>?
        var task: Task<Void, Never>?
        var abandoned = false
    }

    private let lock = NSLock()
    private var inFlight: [String: Exchange] = [:]
    private var nextWaiter = 0

    /// How many callers wait on exchanges in flight now, for tests that must know everyone has joined.
    var waitingCount: Int { lock.withLock { inFlight.values.reduce(0) { $0 + $1.active.count } } }


    /// The outcome of the exchange for `key`: a new one running `operation` when none is in flight
    /// (`joined` false), else the one in flight (`joined` true).
    ///
    /// Cancelling the calling task makes this caller leave.
    /// `cancellation` is the caller's run: its stop makes this caller leave as its task's cancellation does.
    func run(key: String, cancellation: ExchangeCancellation,
             operation: @escaping @Sendable () async throws -> CacheAnswer) async throws -> (answer: CacheAnswer, joined: Bool) {
        let (exchange, waiter, isLeader) = lock.withLock {
            nextWaiter += 1
            if let running = inFlight[key] {
                running.active.insert(nextWaiter)
                return (running, nextWaiter, false)
            }
            let started = Exchange()
            started.active.insert(nextWaiter)
            inFlight[key] = started
            return (started, nextWaiter, true)
        }
        if isLeader { start(exchange, key: key, operation: operation) }
        if !cancellation.register(Departure(coalescer: self, exchange: exchange, waiter: waiter, key: key)) {
            leave(exchange, waiter: waiter, key: key)
        }
        let answer = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<CacheAnswer, any Error>) in
                let immediate: Result<CacheAnswer, any Error>? = lock.withLock {
                    if let outcome = exchange.outcome { return outcome }
                    if exchange.departed.remove(waiter) != nil { return .failure(CancellationError()) }
                    exchange.waiters[waiter] = continuation
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            leave(exchange, waiter: waiter, key: key)
        }
        return (answer, !isLeader)
    }

    /// Starts `operation` as the exchange for `key` with nobody waiting, unless one is in flight
    /// already (then nothing happens): a background refresh, once per key however many ask.
    func startDetached(key: String, operation: @escaping @Sendable () async throws -> CacheAnswer) {
        let exchange: Exchange? = lock.withLock {
            guard inFlight[key] == nil else { return nil }
            let started = Exchange()
            inFlight[key] = started
            return started
        }
        if let exchange { start(exchange, key: key, operation: operation) }
    }

    /// Waits until every exchange in flight now has finished (tests and benchmarks use it to
    /// wait for background refreshes without sleeping).
    func waitUntilIdle() async {
        let tasks = lock.withLock { inFlight.values.compactMap(\.task) }
        for task in tasks { await task.value }
    }

    private func start(_ exchange: Exchange, key: String,
                       operation: @escaping @Sendable () async throws -> CacheAnswer) {
        let task = Task {
            let outcome: Result<CacheAnswer, any Error>
            do {
                outcome = .success(try await operation())
            } catch {
                outcome = .failure(error)
            }
            let waiters = lock.withLock {
                if inFlight[key] === exchange { inFlight[key] = nil }
                exchange.outcome = outcome
                exchange.active = []
                defer { exchange.waiters = [:] }
                return Array(exchange.waiters.values)
            }
            for waiter in waiters { waiter.resume(with: outcome) }
        }
        let cancelNow = lock.withLock {
            exchange.task = task
            return exchange.abandoned
        }
        if cancelNow { task.cancel() }
    }

    /// A waiter leaving when its run stops.
    private final class Departure: ExchangeCancelling {
        let coalescer: RequestCoalescer
        let exchange: Exchange
        let waiter: Int
        let key: String

        init(coalescer: RequestCoalescer, exchange: Exchange, waiter: Int, key: String) {
            self.coalescer = coalescer
            self.exchange = exchange
            self.waiter = waiter
            self.key = key
        }

        func cancelExchange() { coalescer.leave(exchange, waiter: waiter, key: key) }
    }

    /// Takes `waiter` off the exchange with a cancellation error; cancels the exchange when it was the last.
    private func leave(_ exchange: Exchange, waiter: Int, key: String) {
        let (continuation, abandon) = lock.withLock { () -> (CheckedContinuation<CacheAnswer, any Error>?, Bool) in
            guard exchange.outcome == nil, exchange.active.remove(waiter) != nil else { return (nil, false) }
            let continuation = exchange.waiters.removeValue(forKey: waiter)
            if continuation == nil { exchange.departed.insert(waiter) }
            guard exchange.active.isEmpty, !exchange.abandoned else { return (continuation, false) }
            exchange.abandoned = true
            // Nobody waits any more: new callers start afresh instead of joining a cancelled exchange.
            if inFlight[key] === exchange { inFlight[key] = nil }
            return (continuation, true)
        }
        continuation?.resume(throwing: CancellationError())
        if abandon { lock.withLock { exchange.task }?.cancel() }
    }
}
