import Foundation

/// Where a transport delivers a response: the head once, then the body as it arrives.
///
/// The pipeline chooses the sink: in memory with a size limit (ordinary tasks), or the bounded
/// buffer of a body that goes up the chain as a stream (downloads to a file, streams). A transport calls `receive(_:)` once with the head of
/// the response (a redirect's too: transports never follow them), then `offer(_:)` for each run
/// of decoded body bytes, from any one thread at a time. The pipeline's own sinks see only the
/// final response of a redirect chain (`RedirectStep` drops the others).
///
/// Back-pressure: `offer` returns `false` when the sink is full and did not take the bytes. The
/// transport then stops reading, calls `whenReady` with a way to go on, and offers the same bytes
/// again once that runs. Sinks that always take their bytes keep the default `whenReady`.
///
/// A sink that throws stops the exchange: the transport ends the transfer at once and rethrows
/// that error from `send`.
@_spi(Transport) public protocol ResponseBodySink: AnyObject, Sendable {
    /// The head of the response, before any body bytes.
    func receive(_ head: ResponseHead) throws

    /// Body bytes, decoded; valid only during the call. Returns whether the sink took them.
    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool

    /// Asks to be told, once, when the sink can take bytes again; calls `resume` at once if it can now.
    func whenReady(_ resume: @escaping @Sendable () -> Void)

    /// Whether the sink counts on the transport to stop reading while it refuses bytes, because
    /// its reader may take them at any pace (a stream). A transport that cannot pause a transfer
    /// refuses such a sink rather than buffer without bound: `URLSessionTransport` on Linux.
    var needsBackPressure: Bool { get }
}

extension ResponseBodySink {
    /// Calls `resume` at once: this sink never refuses bytes.
    @_spi(Transport) public func whenReady(_ resume: @escaping @Sendable () -> Void) { resume() }

    /// `false`: the sink takes its bytes at the transport's pace.
    @_spi(Transport) public var needsBackPressure: Bool { false }

    /// Delivers a whole response, waiting whenever the sink is full: for transports that only
    /// ever have the whole body. Runs on the caller's executor.
    @_spi(Transport) public nonisolated(nonsending) func deliver(_ response: TransportResponse) async throws {
        try receive(response.head)
        var offset = 0
        let body = response.data
        while offset < body.count {
            let end = min(offset + Self.deliveryChunkSize, body.count)
            let taken = try body[(body.startIndex + offset)..<(body.startIndex + end)].withUnsafeBytes { try offer($0) }
            if taken {
                offset = end
            } else {
                await withCheckedContinuation { continuation in whenReady { continuation.resume() } }
                try Task.checkCancellation()
            }
        }
    }

    /// How much of a whole body `deliver` offers at a time, so a stream sink sees it in pieces.
    static var deliveryChunkSize: Int { 64 * 1024 }
}
