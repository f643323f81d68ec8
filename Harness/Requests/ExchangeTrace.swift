@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// Each exchange of a run as the transport carried it, kept by `WatchingTransport`: the request
/// head the transport reported sending, the response head it received, its connection. `-v`
/// prints each as it ends; `--output-json` shows the last one's request fields.
final class ExchangeTrace: @unchecked Sendable {  // guarded by: its NSLock
    /// One exchange: one request and the response to it (a redirect hop, an attempt).
    struct Exchange: Sendable {
        /// The request as Convey handed it to the transport.
        let request: OutgoingRequest
        /// The request head as the transport reported sending it; `nil` when it reports none
        /// (the embedded server's stub) or the exchange failed.
        let sentHead: SentHead?
        /// The response head, when one arrived.
        let responseHead: ResponseHead?
        /// What the transport measured, when the exchange completed.
        let metrics: ExchangeMetrics?
    }

    private let lock = NSLock()
    private var last: Exchange?
    private let onExchange: (@Sendable (Exchange) -> Void)?

    /// A trace that calls `onExchange` as each exchange ends, from the run's task.
    init(onExchange: (@Sendable (Exchange) -> Void)? = nil) {
        self.onExchange = onExchange
    }

    /// The exchange that ended last.
    var lastExchange: Exchange? { lock.withLock { last } }

    func record(_ exchange: Exchange) {
        lock.withLock { last = exchange }
        onExchange?(exchange)
    }
}

/// Passes a response to the run's sink, keeping its head for the trace.
final class HeadKeepingSink: ResponseBodySink, @unchecked Sendable {  // guarded by: its NSLock
    private let base: any ResponseBodySink
    private let lock = NSLock()
    private var received: ResponseHead?

    init(_ base: any ResponseBodySink) {
        self.base = base
    }

    /// The head the transport delivered, if any.
    var head: ResponseHead? { lock.withLock { received } }

    func receive(_ head: ResponseHead) throws {
        lock.withLock { received = head }
        try base.receive(head)
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool { try base.offer(bytes) }
    func whenReady(_ resume: @escaping @Sendable () -> Void) { base.whenReady(resume) }
    var needsBackPressure: Bool { base.needsBackPressure }
}
