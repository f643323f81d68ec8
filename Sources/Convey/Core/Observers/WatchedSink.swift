import Foundation

/// Stands between a transport and the pipeline's sink while a run's observers watch its exchange
/// on the wire: notes the head, counts the body's bytes and keeps the first of them for observers
/// that record bodies, and notes whether the sink, not the server, ended the exchange. Everything
/// passes through untouched, back-pressure included.
final class WatchedSink: ResponseBodySink {
    private let sink: any ResponseBodySink
    private let limit: Int
    private let state = InlineLocked(Seen())

    /// What the watched exchange brought so far.
    struct Seen: Sendable {
        var head: ResponseHead?
        var body = Data()
        var bytes: Int64 = 0
        var sinkFailed = false
    }

    /// Watches what goes to `sink`, keeping up to `limit` body bytes.
    init(_ sink: any ResponseBodySink, keeping limit: Int) {
        self.sink = sink
        self.limit = limit
    }

    /// What the exchange brought so far.
    var seen: Seen { state.value }

    func receive(_ head: ResponseHead) throws {
        state.withLock { $0.head = head }
        do {
            try sink.receive(head)
        } catch {
            state.withLock { $0.sinkFailed = true }
            throw error
        }
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        let taken: Bool
        do {
            taken = try sink.offer(bytes)
        } catch {
            state.withLock { $0.sinkFailed = true }
            throw error
        }
        guard taken else { return false }
        state.withLock { seen in
            seen.bytes += Int64(bytes.count)
            let room = limit - seen.body.count
            if room > 0 { seen.body.append(contentsOf: bytes.prefix(room)) }
        }
        return true
    }

    func whenReady(_ resume: @escaping @Sendable () -> Void) {
        sink.whenReady(resume)
    }

    var needsBackPressure: Bool { sink.needsBackPressure }
}
