@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// Wraps a transport to count each attempt's exchanges (one per redirect hop, for `-w
/// '%{num_redirects}'`), to feed every transfer's progress to a progress bar, and to trace each
/// exchange (`-v`, `--output-json`): the request head the transport reports sending, which it is
/// asked for (`TransportRequest.capturesSentHead`), and the response head it delivers.
struct WatchingTransport: ConveyTransport {
    let base: any ConveyTransport
    let hops: HopCounter?
    let bar: ProgressBar?
    let trace: ExchangeTrace?

    func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        hops?.sent()
        var watched = request
        if let bar {
            let earlier = request.progress
            watched.progress = { [bar] progress in
                earlier?(progress)
                bar.update(progress)
            }
            bar.start()
        }
        guard let trace else {
            defer { bar?.finish() }
            return try await base.send(watched, into: sink)
        }
        watched.capturesSentHead = true
        let keeping = HeadKeepingSink(sink)
        let metrics: ExchangeMetrics
        do {
            metrics = try await base.send(watched, into: keeping)
        } catch {
            bar?.finish()
            trace.record(ExchangeTrace.Exchange(request: request.request, sentHead: nil, responseHead: keeping.head, metrics: nil))
            throw error
        }
        bar?.finish()
        trace.record(ExchangeTrace.Exchange(request: request.request, sentHead: metrics.sentHead.flatMap(SentHead.init),
                                            responseHead: keeping.head, metrics: metrics))
        return metrics
    }
}

/// How many exchanges the current attempt of a task has sent: the first request and each
/// redirect followed. Reset when an attempt starts (`willSendRequest`).
final class HopCounter: @unchecked Sendable {  // guarded by: its NSLock
    private let lock = NSLock()
    private var count = 0

    /// The exchanges of the current attempt so far.
    var exchanges: Int { lock.withLock { count } }

    /// A new attempt starts.
    func reset() { lock.withLock { count = 0 } }

    /// One more exchange went to the transport.
    func sent() { lock.withLock { count += 1 } }
}
