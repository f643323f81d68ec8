#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A Linux transport that drives libcurl's multi interface itself: the same wire behaviour as
/// `URLSessionTransport`, at a fraction of its cost (see Docs/performance.md).
///
/// By default every curl transport in the process shares one event loop thread, which drives
/// libcurl and runs no app code; a transport made with `eventLoops` above 1 spreads its transfers
/// over loops of its own, one thread each, for more throughput than one core gives (see
/// `Configuration.eventLoops`). Each transport keeps its own cookie jar, TLS sessions,
/// connections, pooled easy handles and per-host connection limit. A redirect is returned as the
/// response (the pipeline follows it, each hop a send of its own).
/// Requests ask for `gzip, deflate` unless they name their own `Accept-Encoding`; Convey decodes
/// those itself, checking their integrity (a truncated or corrupt body is an error), and hands
/// any other coding through undecoded with its `Content-Encoding`. The head and body go to the
/// pipeline's sink as they arrive; a full sink pauses the transfer. TLS is verified against
/// the system's CA store and proxies come from the environment (`http_proxy`, `https_proxy`,
/// `no_proxy`) unless `tls` and `proxy` say otherwise; HTTP/2 is used over TLS when the server
/// offers it, many requests sharing one connection (see Docs/tls-and-proxies.md). A 401 comes back at once (no credential is ever answered).
/// Cancelling the calling task removes the transfer at once.
///
/// Builds with no libcurl development headers: Convey declares the libcurl functions it calls and
/// links `libcurl.so.4`, the runtime library FoundationNetworking uses too.
@_spi(Transport) public final class CurlTransport: ConveyTransport {
    /// Settings for a curl transport.
    @_spi(Transport) public struct Configuration: Sendable {
        /// Connections open at once to one host; more requests wait for a free one. Default: 6, as URLSession.
        public var maximumConnectionsPerHost: Int
        /// How long connecting (TCP and TLS) may take. Default: `nil`, the request's idle timeout.
        public var connectTimeout: Duration?
        /// Whether cookies the server sets are kept, in memory for this transport, and sent back
        /// with later requests, as URLSession does. Default: `true`.
        public var storesCookies: Bool
        /// Trust roots, pinned public keys, the lowest TLS version and the client certificate.
        /// Default: the system's store, no pins, TLS 1.2 or later, no certificate.
        public var tls: TLSConfiguration
        /// The proxy. Default: `.environment` (`http_proxy`, `https_proxy`, `no_proxy`).
        public var proxy: ProxyConfiguration
        /// The HTTP version asked for unless a request names its own. Default: `.automatic`,
        /// HTTP/2 over TLS when the server offers it.
        public var httpVersion: HTTPVersionPreference
        /// Requests at once to one host over one HTTP/2 or HTTP/3 connection, once the host has
        /// answered over it; more wait for a free stream. Default: 100, nginx's and most servers' own limit.
        public var maximumStreamsPerHost: Int
        /// How many event loops (threads driving libcurl) run this transport's transfers, 1 to 16
        /// (other values are clamped). Default: 1, the loop every such transport in the process shares.
        ///
        /// One loop moves about 10,000 small responses a second on a fast core; a transport that
        /// needs more gets loops of its own with 2 or more, which end when it is released. Its
        /// transfers go to the loop with the most room for their host: a light load stays on the
        /// first loop and reuses its connections, a heavy one spreads over all. Each loop keeps
        /// its own connections (libcurl cannot share a connection cache between threads), so
        /// `maximumConnectionsPerHost` and `maximumStreamsPerHost` are split between the loops
        /// and still hold in total; cookies and TLS sessions stay common to all of them.
        public var eventLoops: Int

        /// Creates a configuration; every parameter has the documented default.
        public init(maximumConnectionsPerHost: Int = 6,
                    connectTimeout: Duration? = nil, storesCookies: Bool = true,
                    tls: TLSConfiguration = TLSConfiguration(), proxy: ProxyConfiguration = .environment,
                    httpVersion: HTTPVersionPreference = .automatic, maximumStreamsPerHost: Int = 100,
                    eventLoops: Int = 1) {
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.connectTimeout = connectTimeout
            self.storesCookies = storesCookies
            self.tls = tls
            self.proxy = proxy
            self.httpVersion = httpVersion
            self.maximumStreamsPerHost = maximumStreamsPerHost
            self.eventLoops = eventLoops
        }
    }

    /// Whether the libcurl this process runs can speak HTTP/3 (`HTTPVersionPreference.http3`).
    public static var supportsHTTP3: Bool { CurlConnectionOptions.libcurlSupportsHTTP3 }

    /// The settings this transport was made with.
    public let configuration: Configuration
    private let pool: CurlHandlePool

    /// How many of this transport's transfers are on the wire now, over all its loops (0 once
    /// every send has returned).
    func transfersOnTheWire() async -> Int {
        var count = 0
        for loop in pool.loops { count += await loop.transfersOnTheWire(of: pool) }
        return count
    }

    /// How many transfers each of this transport's loops was given since it was made.
    var transfersStartedPerLoop: [Int] { pool.transfersAdmittedPerLoop }

    /// How many easy handles this transport has made: one, while it sends one request at a time.
    var handlesMade: Int { pool.handlesMade }

    /// The loops this transport's transfers run on.
    var eventLoops: [CurlEventLoop] { pool.loops }

    /// The most event loops one transport may have.
    static let maximumEventLoops = 16

    /// Creates a transport with its own cookie jar and handle pool, on the process's shared event
    /// loop or, with `eventLoops` above 1, on loops of its own.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let count = min(max(configuration.eventLoops, 1), Self.maximumEventLoops)
        let loops = count == 1 ? [CurlEventLoop.shared]
            : (1...count).map { _ in CurlEventLoop() }
        pool = CurlHandlePool(configuration: configuration, loops: loops, maximumIdleHandles: 32)
    }

    deinit {
        // No transfer is left (each send holds the transport): the transport's own loops end,
        // keeping the pool's share handle until their connections are closed.
        guard pool.loops.count > 1 else { return }
        for loop in pool.loops { loop.stop(owner: pool) }
    }

    /// A byte stream to `url` on this transport's first loop, with its TLS and proxy options,
    /// `head` written once connected: what a WebSocket runs over. Connecting takes at most the
    /// configuration's `connectTimeout`, else `connectTimeout`.
    func rawConnection(to url: URL, sending head: [UInt8], connectTimeout: Duration) async throws -> CurlRawConnection {
        try await CurlRawConnection.connect(to: url, sending: head, options: pool.connectionOptions, loop: pool.loops[0],
                                            connectTimeout: configuration.connectTimeout?.clampedTimeout ?? connectTimeout)
    }

    /// `true`: a run's stop ends the transfer through `TransportRequest.cancellation`.
    public var registersExchangeCancellation: Bool { true }

    /// Runs on the caller's executor, which is never an event loop's thread.
    public nonisolated(nonsending) func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        let url = request.request.url
        guard AllowedSchemes.allow(url) else { throw AllowedSchemes.unsupported(url) }
        // As URLSession reports it, whether the task was cancelled before or during a transfer.
        if Task.isCancelled { throw URLError(.cancelled, userInfo: [NSURLErrorFailingURLErrorKey: url]) }
        return try await exchange(request, url: url, sink: sink)
    }

    /// One request and its response on the wire.
    ///
    /// `isolation` is the caller's (`@ConveyActor` in the pipeline): the waiting closure below
    /// captures it so that it runs there too, where a plain closure would hop to the global executor.
    private func exchange(_ request: TransportRequest, url: URL, sink: any ResponseBodySink,
                          isolation: isolated (any Actor)? = #isolation) async throws -> ExchangeMetrics {
        guard pool.drivesTransfers, let easy = pool.takeHandle() else {
            throw URLError(.cannotLoadFromNetwork, userInfo: [
                NSLocalizedDescriptionKey: "libcurl could not allocate a handle",
                NSURLErrorFailingURLErrorKey: url,
            ])
        }
        if let failure = pool.connectionOptions.failure {
            pool.recycle(easy)
            throw CurlErrors.unusableConfiguration(failure, url: url)
        }
        if let refused = easy.refusedSetting {
            pool.recycle(easy)
            throw CurlErrors.unusableConfiguration("this libcurl refused option \(refused); nothing was sent", url: url)
        }
        let idleTimeout = request.timeout.clampedTimeout
        easy.httpVersion = request.httpVersion ?? configuration.httpVersion
        let secure = url.scheme?.lowercased() == "https"
        easy.waitsToMultiplex = secure ? easy.httpVersion != .http1_1 : easy.httpVersion == .http2PriorKnowledge
        let transfer: CurlTransfer
        do {
            transfer = try CurlTransfer(request, connectTimeout: configuration.connectTimeout?.clampedTimeout ?? idleTimeout,
                                        sink: sink, easy: easy, pool: pool)
        } catch {
            pool.recycle(easy)
            throw error
        }
        defer { pool.recycle(easy) }
        // The run's stops (by tag or type, the total timeout) end the transfer as the task's cancellation does.
        guard request.cancellation.register(transfer) else {
            transfer.requestBody?.close()
            throw CurlTransfer.cancelled(url)
        }
        // No task executor preference for the loop: a task preferring it would run the actor's
        // queued jobs (app hooks) on the loop's thread whenever it held the actor.
        await withTaskCancellationHandler {
            _ = isolation
            // A checked continuation: its hand-off is one ThreadSanitizer follows (an unsafe one is
            // resumed from the loop thread in a way TSan reports as a race on the task's frame).
            await transfer.run { pool.start(transfer) }
        } onCancel: {
            pool.cancel(transfer)
        }
        return try await transfer.outcome()
    }
}
#endif
