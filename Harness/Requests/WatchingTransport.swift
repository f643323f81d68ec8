@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// Wraps a transport to count each attempt's exchanges (one per redirect hop, for `-w
/// '%{num_redirects}'`) and to feed every transfer's progress to a progress bar.
struct WatchingTransport: ConveyTransport {
    let base: any ConveyTransport
    let hops: HopCounter?
    let bar: ProgressBar?

    func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        hops?.sent()
        guard let bar else { return try await base.send(request, into: sink) }
        var watched = request
        let earlier = request.progress
        watched.progress = { [bar] progress in
            earlier?(progress)
            bar.update(progress)
        }
        bar.start()
        defer { bar.finish() }
        return try await base.send(watched, into: sink)
    }
}

/// How many exchanges the current attempt of a task has sent: the first request and each
/// redirect followed. Reset when an attempt starts (`willSendRequest`).
final class HopCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    /// The exchanges of the current attempt so far.
    var exchanges: Int { lock.withLock { count } }

    /// A new attempt starts.
    func reset() { lock.withLock { count = 0 } }

    /// One more exchange went to the transport.
    func sent() { lock.withLock { count += 1 } }
}
