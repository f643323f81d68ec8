#if canImport(CConveyCurlShim)
import CConveyCurlShim
import CCurl
import Foundation

/// What belongs to one `CurlTransport` on the process's shared event loop: its cookie jar and TLS
/// sessions, its idle easy handles, and its per-origin connection limit.
///
/// Transfers keep their pool alive, so its share handle outlives every easy handle that uses it.
final class CurlHandlePool: @unchecked Sendable {
    /// The cookie jar and TLS sessions of this transport's transfers; `nil` if libcurl could not make one.
    private let share: OpaquePointer?
    private let handleDefaults: CurlHandleDefaults
    /// The transport's trust, pinning, client certificate and proxy options, set on every handle.
    let connectionOptions: CurlConnectionOptions
    private let maximumIdleHandles: Int
    /// Easy handles waiting for their next request, behind a lock: senders may run on any thread.
    private let idleHandlesLock = NSLock()
    private var idleHandles: [CurlEasyHandle] = []
    /// Which of this transport's transfers run and which wait for a connection. Event loop thread only.
    var queues: CurlHostQueues<CurlTransfer>

    init(configuration: CurlTransport.Configuration, maximumIdleHandles: Int) {
        let share = convey_curl_share_create()
        self.share = share
        self.maximumIdleHandles = maximumIdleHandles
        connectionOptions = CurlConnectionOptions(tls: configuration.tls, proxy: configuration.proxy,
                                                  systemCAFile: CurlConnectionOptions.systemCAFile)
        handleDefaults = CurlHandleDefaults(share: share.flatMap { convey_curl_share_handle($0) },
                                            storesCookies: configuration.storesCookies, connectionOptions: connectionOptions)
        queues = CurlHostQueues(connectionsPerOrigin: max(0, configuration.maximumConnectionsPerHost),
                                streamsPerMultiplexedOrigin: max(1, configuration.maximumStreamsPerHost))
    }

    deinit {
        // Every easy handle that used the share goes first: the idle ones here, the others with
        // their transfers, which hold this pool.
        idleHandles.removeAll()
        convey_curl_share_destroy(share)
    }

    /// An easy handle from the pool, or a new one; `nil` only when libcurl cannot allocate.
    func takeHandle() -> CurlEasyHandle? {
        idleHandlesLock.withLock { idleHandles.popLast() } ?? CurlEasyHandle(defaults: handleDefaults)
    }

    /// Returns a handle whose transfer is over to the pool.
    func recycle(_ handle: CurlEasyHandle) {
        handle.prepareForReuse()
        idleHandlesLock.withLock {
            // A handle the pool has no room for is freed when this call drops it.
            if idleHandles.count < maximumIdleHandles { idleHandles.append(handle) }
        }
    }
}
#endif
