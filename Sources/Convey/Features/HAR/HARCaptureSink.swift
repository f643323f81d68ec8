import Foundation

/// Stands between a transport and the pipeline's sink, keeping a copy of what came back for a
/// HAR entry: the head, and the body bytes the sink took, up to a limit. Everything else passes
/// through untouched, back-pressure included.
final class HARCaptureSink: ResponseBodySink, @unchecked Sendable {
    private let lock = NSLock()
    private let sink: any ResponseBodySink
    private let limit: Int
    private var head: ResponseHead?
    private var body = Data()
    private var total: Int64 = 0
    private var sinkFailure: (any Error)?

    init(_ sink: any ResponseBodySink, limit: Int) {
        self.sink = sink
        self.limit = limit
    }

    /// The head that came back, the body kept, and how many body bytes came in all.
    var captured: (head: ResponseHead?, body: Data, total: Int64) { lock.withLock { (head, body, total) } }
    /// What the pipeline's sink threw, when the exchange ended because of it rather than the network.
    var failureFromSink: (any Error)? { lock.withLock { sinkFailure } }

    func receive(_ head: ResponseHead) throws {
        lock.withLock { self.head = head }
        do {
            try sink.receive(head)
        } catch {
            lock.withLock { sinkFailure = error }
            throw error
        }
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        let taken: Bool
        do {
            taken = try sink.offer(bytes)
        } catch {
            lock.withLock { sinkFailure = error }
            throw error
        }
        guard taken else { return false }
        lock.withLock {
            total += Int64(bytes.count)
            let room = limit - body.count
            if room > 0 { body.append(contentsOf: bytes.prefix(room)) }
        }
        return true
    }

    func whenReady(_ resume: @escaping @Sendable () -> Void) {
        sink.whenReady(resume)
    }

    var needsBackPressure: Bool { sink.needsBackPressure }
}
