@_spi(Transport) import Convey
import Foundation

/// Wraps a transport to feed every transfer's progress to a progress bar.
struct ProgressReportingTransport: ConveyTransport {
    let base: any ConveyTransport
    let bar: ProgressBar

    func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
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
