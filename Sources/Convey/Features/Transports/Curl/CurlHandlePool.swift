#if os(Linux) && canImport(CConveyCurlShim)
internal import CConveyCurlShim
internal import CCurl
import Foundation

/// What belongs to one `CurlTransport`: its event loops, its cookie jar and TLS sessions, its
/// idle easy handles, and its per-origin connection limit, kept across all its loops.
///
/// Transfers keep their pool alive, so its share handle outlives every easy handle that uses it.
final class CurlHandlePool: Sendable {
    /// Where the transport's transfers run: the process's shared loop, or loops of its own.
    let loops: [CurlEventLoop]
    /// The cookie jar and TLS sessions of this transport's transfers; `nil` if libcurl could not make one.
    nonisolated(unsafe) private let share: OpaquePointer?  // guarded by: its own locks (libcurl's share lock callbacks)
    private let handleDefaults: CurlHandleDefaults
    /// The transport's trust, pinning, client certificate and proxy options, set on every handle.
    let connectionOptions: CurlConnectionOptions
    private let maximumIdleHandles: Int
    /// The transport's connections, for requests with a `ConnectionObserver`; `nil` when they
    /// would outlive the pool (no share handle to hold the shared loop's connections).
    let connections: CurlConnectionTracker?

    /// Easy handles waiting for their next request (senders may run on any thread), and how many
    /// the pool has made.
    private struct Handles {
        var idle: [CurlEasyHandle] = []
        var made = 0
    }

    private let handles = CurlLocked(Handles())
    /// Which of this transport's transfers run, on which loop, and which wait for a connection.
    /// Its lock, the admission lock, also guards each transfer's `loop` and
    /// `cancelledBeforeAdmission`: senders admit and withdraw transfers on their own threads,
    /// loops hand a finished transfer's place on.
    private let queues: CurlLocked<CurlHostQueues<CurlTransfer>>

    /// A pool whose transfers run on `loops`. One loop of its own or the shared one: the share
    /// handle also keeps the transport's connections apart from other transports' on that loop.
    /// Several: each loop's multi handle keeps them (libcurl's shared connection cache is not
    /// safe across threads), and the share keeps the cookies and TLS sessions common to all.
    init(configuration: CurlTransport.Configuration, loops: [CurlEventLoop], maximumIdleHandles: Int) {
        self.loops = loops
        let share = convey_curl_share_create(loops.count == 1 ? 1 : 0)
        self.share = share
        self.maximumIdleHandles = maximumIdleHandles
        connectionOptions = CurlConnectionOptions(tls: configuration.tls, proxy: configuration.proxy,
                                                  systemCAFile: CurlConnectionOptions.systemCAFile)
        // The connections close before the pool goes: with the share handle (in `deinit`), or
        // with the multi handle of each loop of its own, which holds the pool until then.
        let connections = share != nil || loops.count > 1 ? CurlConnectionTracker() : nil
        self.connections = connections
        handleDefaults = CurlHandleDefaults(share: share.flatMap { convey_curl_share_handle($0) },
                                            storesCookies: configuration.storesCookies, connectionOptions: connectionOptions,
                                            connections: connections)
        queues = CurlLocked(CurlHostQueues(connectionsPerOrigin: max(0, configuration.maximumConnectionsPerHost),
                                      streamsPerMultiplexedOrigin: max(1, configuration.maximumStreamsPerHost),
                                      loops: loops.count))
    }

    deinit {
        // Every easy handle that used the share goes first: the idle ones here, the others with
        // their transfers, which hold this pool.
        handles.withLock { $0.idle.removeAll() }
        convey_curl_share_destroy(share)
    }

    /// Whether transfers can run: every loop has a libcurl multi handle.
    var drivesTransfers: Bool { loops.allSatisfy(\.drivesTransfers) }

    /// An easy handle from the pool, or a new one; `nil` only when libcurl cannot allocate.
    func takeHandle() -> CurlEasyHandle? {
        if let idle = handles.withLock({ $0.idle.popLast() }) { return idle }
        guard let made = CurlEasyHandle(defaults: handleDefaults) else { return nil }
        handles.withLock { $0.made += 1 }
        return made
    }

    /// Returns a handle whose transfer is over to the pool.
    func recycle(_ handle: CurlEasyHandle) {
        handle.prepareForReuse()
        handles.withLock { handles in
            // A handle the pool has no room for is freed when this call drops it.
            if handles.idle.count < maximumIdleHandles { handles.idle.append(handle) }
        }
    }

    /// How many easy handles the pool has made: a transport sending one request at a time makes one.
    var handlesMade: Int { handles.withLock { $0.made } }

    // MARK: Admission, from any thread

    /// What a sender does next with a transfer it started or cancelled.
    private enum Placement {
        /// End it now, with `URLError(.cancelled)`: it never reached a loop.
        case endsCancelled
        /// Nothing: it waits for a place, or its start will see the cancellation.
        case pending
        /// Hand it to this loop.
        case on(CurlEventLoop)
    }

    /// Starts `transfer` on a loop with room for it, or queues it for its origin's next free place;
    /// ends it at once if its sender was cancelled already.
    func start(_ transfer: CurlTransfer) {
        let placement: Placement = queues.withLock { queues in
            guard !transfer.cancelledBeforeAdmission else { return .endsCancelled }
            guard let index = queues.admit(transfer, origin: transfer.origin) else { return .pending }
            transfer.loop = loops[index]
            return .on(loops[index])
        }
        switch placement {
        case .endsCancelled: transfer.end(CurlTransferEnding(failure: CurlTransfer.cancelled(transfer.url)))
        case .pending: break
        case .on(let loop): loop.start(transfer)
        }
    }

    /// Ends `transfer` at once with `URLError(.cancelled)`, wherever it is: waiting for a place,
    /// on a loop, or not started yet (then its start ends it).
    func cancel(_ transfer: CurlTransfer) {
        let placement: Placement = queues.withLock { queues in
            if queues.removeWaiting(transfer, origin: transfer.origin) { return .endsCancelled }
            guard let loop = transfer.loop else {
                transfer.cancelledBeforeAdmission = true
                return .pending
            }
            return .on(loop)
        }
        switch placement {
        case .endsCancelled: transfer.end(CurlTransferEnding(failure: CurlTransfer.cancelled(transfer.url)))
        case .pending: break
        case .on(let loop): loop.cancel(transfer)
        }
    }

    /// Frees the place `transfer` held on `loop` (it ran, or failed to start, or was cancelled
    /// before it did) and returns whoever may run now, each with the index of its loop in `loops`.
    func finished(_ transfer: CurlTransfer, on loop: CurlEventLoop, multiplexed: Bool) -> CurlHostQueues<CurlTransfer>.Admitted {
        // A loop that is not the pool's frees no place (-1 is no loop's index).
        let index = loops.firstIndex { $0 === loop } ?? -1
        return queues.withLock { queues in
            let admitted = queues.finished(origin: transfer.origin, loop: index, multiplexed: multiplexed)
            for next in admitted { next.item.loop = loops[next.loop] }
            return admitted
        }
    }

    /// How many transfers each of the transport's loops was given since it was made.
    var transfersAdmittedPerLoop: [Int] {
        queues.withLock { $0.admittedPerLoop }
    }
}
#endif
