import Foundation

/// Shares one exchange among identical requests in flight: the first caller starts it, later
/// callers with the same key join it, and every caller gets its outcome.
///
/// The exchange runs in a task of its own, so it belongs to no single caller: a caller whose task
/// is cancelled (by its own caller, or by its run's tag or total timeout, which cancel the
/// attempt's task) stops waiting at once with a cancellation error, and the exchange goes on
/// while others still wait; when the last waiter leaves, the exchange's task is cancelled. A
/// failure reaches every waiter.
final class RequestCoalescer: Sendable {
    /// One shared exchange and the callers waiting for it, compared by identity.
    ///
    /// Its state has a lock of its own. Where a step reads or changes both the exchanges in flight
    /// and an exchange's state, it takes the coalescer's lock first and the exchange's inside it,
    /// never the other way round, so that step is as atomic as under one lock.
    private final class Exchange: Sendable {
        let state: InlineLocked<State>

        struct State: Sendable {
            /// Callers still waiting, registered or about to be.
            var active: Set<Int>
            var waiters: [Int: CheckedContinuation<CacheAnswer, any Error>] = [:]
            /// Waiters that left before they were registered.
            var departed: Set<Int> = []
            var outcome: Result<CacheAnswer, any Error>?
            var task: Task<Void, Never>?
            var abandoned = false
        }

        /// An exchange with `active` waiting.
        init(active: Set<Int>) {
            state = InlineLocked(State(active: active))
        }
    }

    private let exchanges = InlineLocked(Exchanges())

    /// The exchanges in flight by key, and the last waiter's number.
    private struct Exchanges: Sendable {
        var inFlight: [String: Exchange] = [:]
        var nextWaiter = 0
    }

    /// How many callers wait on exchanges in flight now, for tests that must know everyone has joined.
    var waitingCount: Int {
        exchanges.withLock { exchanges in
            exchanges.inFlight.values.reduce(0) { count, exchange in count + exchange.state.withLock { $0.active.count } }
        }
    }

    /// The outcome of the exchange for `key`: a new one running `operation` when none is in flight
    /// (`joined` false), else the one in flight (`joined` true).
    ///
    /// Cancelling the calling task makes this caller leave.
    /// `cancellation` is the caller's run: its stop makes this caller leave as its task's cancellation does.
    func run(key: String, cancellation: ExchangeCancellation,
             operation: @escaping @Sendable () async throws -> CacheAnswer) async throws -> (answer: CacheAnswer, joined: Bool) {
        let (exchange, waiter, isLeader) = exchanges.withLock { exchanges in
            exchanges.nextWaiter += 1
            let waiter = exchanges.nextWaiter
            if let running = exchanges.inFlight[key] {
                running.state.withLock { _ = $0.active.insert(waiter) }
                return (running, waiter, false)
            }
            let started = Exchange(active: [waiter])
            exchanges.inFlight[key] = started
            return (started, waiter, true)
        }
        if isLeader { start(exchange, key: key, operation: operation) }
        if !cancellation.register(Departure(coalescer: self, exchange: exchange, waiter: waiter, key: key)) {
            leave(exchange, waiter: waiter, key: key)
        }
        let answer = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<CacheAnswer, any Error>) in
                let immediate: Result<CacheAnswer, any Error>? = exchange.state.withLock { state in
                    if let outcome = state.outcome { return outcome }
                    if state.departed.remove(waiter) != nil { return .failure(CancellationError()) }
                    state.waiters[waiter] = continuation
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
        let exchange: Exchange? = exchanges.withLock { exchanges in
            guard exchanges.inFlight[key] == nil else { return nil }
            let started = Exchange(active: [])
            exchanges.inFlight[key] = started
            return started
        }
        if let exchange { start(exchange, key: key, operation: operation) }
    }

    /// Waits until every exchange in flight now has finished (tests and benchmarks use it to
    /// wait for background refreshes without sleeping).
    func waitUntilIdle() async {
        let tasks = exchanges.withLock { exchanges in
            exchanges.inFlight.values.compactMap { exchange in exchange.state.withLock { $0.task } }
        }
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
            let waiters = exchanges.withLock { exchanges in
                if exchanges.inFlight[key] === exchange { exchanges.inFlight[key] = nil }
                return exchange.state.withLock { state in
                    state.outcome = outcome
                    state.active = []
                    defer { state.waiters = [:] }
                    return Array(state.waiters.values)
                }
            }
            for waiter in waiters { waiter.resume(with: outcome) }
        }
        let cancelNow = exchange.state.withLock { state in
            state.task = task
            return state.abandoned
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
        let (continuation, abandon) = exchanges.withLock { exchanges in
            exchange.state.withLock { state -> (CheckedContinuation<CacheAnswer, any Error>?, Bool) in
                guard state.outcome == nil, state.active.remove(waiter) != nil else { return (nil, false) }
                let continuation = state.waiters.removeValue(forKey: waiter)
                if continuation == nil { state.departed.insert(waiter) }
                guard state.active.isEmpty, !state.abandoned else { return (continuation, false) }
                state.abandoned = true
                // Nobody waits any more: new callers start afresh instead of joining a cancelled exchange.
                if exchanges.inFlight[key] === exchange { exchanges.inFlight[key] = nil }
                return (continuation, true)
            }
        }
        continuation?.resume(throwing: CancellationError())
        if abandon { exchange.state.withLock { $0.task }?.cancel() }
    }
}
