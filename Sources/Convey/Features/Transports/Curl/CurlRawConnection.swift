#if os(Linux) && canImport(CConveyCurlShim)
internal import CConveyCurlShim
internal import CCurl
import Foundation

/// A byte stream to a server that libcurl connected (TCP, TLS and proxies, with the transport's
/// TLS and proxy options) and Convey speaks over: what a WebSocket runs on, since libcurl 7.88
/// has no WebSocket API of its own.
///
/// curl connects with `CURLOPT_CONNECT_ONLY` through an event loop's multi handle, so the loop
/// drives the connect like any transfer's; then the loop moves bytes with non-blocking
/// `curl_easy_send` and `curl_easy_recv` when the socket is ready (`curl_multi_poll` watches it
/// beside curl's own): no thread per connection. The handle stays in the multi handle while the
/// connection lives (libcurl closes a connect-only connection whose handle leaves it).
///
/// Reading is pulled: the socket is read only while a `read()` waits, so a consumer that stops
/// reading stops the socket being read, and the server's sending slows to what TCP's window
/// holds. Writes go out in order; each returns once curl took all its bytes.
///
/// ```swift
/// let connection = try await CurlRawConnection.connect(to: url, sending: requestHead, options: options)
/// try await connection.write(frame)
/// while let bytes = try await connection.read() { … }   // nil: the server closed
/// connection.close()
/// ```
///
/// Cancelling the task of a pending `connect`, `read` or `write` closes the connection (a write cut
/// short leaves the stream unusable). Failures are `URLError`s, as the curl transport's are.
final class CurlRawConnection: Sendable {
    /// The URL curl connected to (`http` or `https`).
    let url: URL
    private let socket: CurlRawSocket

    private init(url: URL, socket: CurlRawSocket) {
        self.url = url
        self.socket = socket
    }

    deinit {
        socket.close()
    }

    /// Connects to `url`'s host (`ws`/`http` plainly, `wss`/`https` with TLS) on `loop`, with
    /// `options`' trust, client certificate and proxy, within `connectTimeout` (curl's default
    /// without one), then writes `head` (the opening request) and returns once it is all written.
    static func connect(to url: URL, sending head: [UInt8], options: CurlConnectionOptions,
                        loop: CurlEventLoop = .shared, connectTimeout: Duration? = nil) async throws -> CurlRawConnection {
        let address = try curlAddress(of: url)
        if let failure = options.failure { throw CurlErrors.unusableConfiguration(failure, url: address) }
        guard loop.drivesTransfers,
              let easy = CurlEasyHandle(defaults: CurlHandleDefaults(share: nil, storesCookies: false, connectionOptions: options)) else {
            throw URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "libcurl could not make a handle", NSURLErrorFailingURLErrorKey: address])
        }
        if let refused = easy.refusedSetting {
            throw CurlErrors.unusableConfiguration("libcurl refused the option \(refused)", url: address)
        }
        easy.set(CURLOPT_URL, string: address.absoluteString)
        easy.set(CURLOPT_CONNECT_ONLY, 1)
        // The handle's pre-request check belongs to its HTTP transfers, which this is not: curl
        // would call it once connected and stop there.
        _ = convey_curl_easy_setopt_prereq(easy.raw, nil)
        // A connection of its own: never an idle one of the transport's HTTP requests.
        easy.set(CURLOPT_FRESH_CONNECT, 1)
        // Through an HTTP proxy, a tunnel (CONNECT) for plain ws:// too: the bytes are not HTTP
        // requests the proxy could forward.
        easy.set(CURLOPT_HTTPPROXYTUNNEL, 1)
        if let connectTimeout {
            easy.set(CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(connectTimeout.components.seconds * 1000 + connectTimeout.components.attoseconds / 1_000_000_000_000_000)))
        }
        let socket = CurlRawSocket(easy: easy, url: address, loop: loop)
        let connection = CurlRawConnection(url: address, socket: socket)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                loop.runOnLoop { socket.start(sending: head, continuation) }
            }
        } onCancel: {
            socket.close()
        }
        return connection
    }

    /// Writes `bytes`, after every write before it; returns once curl took them all.
    func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        let socket = socket
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                socket.loop.runOnLoop { socket.enqueueWrite(bytes, continuation) }
            }
        } onCancel: {
            socket.close()
        }
    }

    /// The next bytes from the server (at most 64 KiB), once there are some; `nil` once the
    /// server closed its side. One read at a time.
    func read() async throws -> [UInt8]? {
        let socket = socket
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
                socket.loop.runOnLoop { socket.enqueueRead(continuation) }
            }
        } onCancel: {
            socket.close()
        }
    }

    /// Closes the connection; what waits fails with `URLError(.cancelled)`. Safe to call twice.
    func close() {
        socket.close()
    }

    /// `url` as curl takes it: `ws` as `http`, `wss` as `https`; other schemes are refused.
    static func curlAddress(of url: URL) throws -> URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        switch url.scheme?.lowercased() {
        case "ws", "http": components?.scheme = "http"
        case "wss", "https": components?.scheme = "https"
        default: components = nil
        }
        guard let address = components?.url else {
            throw URLError(.unsupportedURL, userInfo: [
                NSLocalizedDescriptionKey: "a raw connection goes to ws, wss, http or https URLs, not \(url.scheme ?? "none")",
                NSURLErrorFailingURLErrorKey: url,
            ])
        }
        return address
    }
}

/// A raw connection's side on its event loop: the handle, the socket, and who waits for what.
/// Everything but `close()` and the initializer runs on the loop's thread.
final class CurlRawSocket: Sendable {
    /// The most a read delivers at once.
    static let readSize = 64 * 1024

    let loop: CurlEventLoop
    private let url: URL
    private let state: CurlLoopBound<State>

    /// One write: its bytes, how many went out, who waits.
    private struct PendingWrite {
        var bytes: [UInt8]
        var sent = 0
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        enum Phase { case idle, connecting, open, closed }
        var phase = Phase.idle
        var easy: CurlEasyHandle?
        var socket: curl_socket_t = -1
        var connecting: CheckedContinuation<Void, any Error>?
        var writes: [PendingWrite] = []
        var reading: CheckedContinuation<[UInt8]?, any Error>?
        var readBuffer: [UInt8] = []
        /// The server closed its side: every read from now on is `nil`.
        var reachedEnd = false
        /// What the loop watches the socket for.
        var watched: Int16 = 0
        /// Why the connection ended, for what waits or comes after.
        var failure: URLError?
    }

    init(easy: CurlEasyHandle, url: URL, loop: CurlEventLoop) {
        self.loop = loop
        self.url = url
        state = CurlLoopBound(State(easy: easy), binding: .anyLoop)
    }

    /// Adds the handle to the loop's multi handle; `head` goes out once connected, and
    /// `continuation` is resumed when it has (when connected, without a head).
    func start(sending head: [UInt8], _ continuation: CheckedContinuation<Void, any Error>) {
        guard state.value.phase == .idle, let easy = state.value.easy else {
            continuation.resume(throwing: state.value.failure ?? Self.closedError(url))
            return
        }
        if let refusal = loop.addRawConnection(self, easy: easy.raw) {
            finish(URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "curl could not start the connection: \(refusal)",
                                                 NSURLErrorFailingURLErrorKey: url]))
            continuation.resume(throwing: state.value.failure ?? Self.closedError(url))
            return
        }
        state.value.phase = .connecting
        // With a head, its write is the connect's end: its continuation is the caller's.
        if head.isEmpty {
            state.value.connecting = continuation
        } else {
            state.value.writes.append(PendingWrite(bytes: head, continuation: continuation))
        }
    }

    /// curl finished connecting (`CURLE_OK`) or gave up; called by the loop.
    func connectFinished(_ result: CURLcode) {
        guard state.value.phase == .connecting, let easy = state.value.easy else { return }
        guard result == CURLE_OK else {
            finish(CurlErrors.urlError(for: result, osErrno: easy.info(CURLINFO_OS_ERRNO), message: easy.errorMessage, url: url, bodyReadFailed: false))
            return
        }
        var socket: curl_socket_t = -1
        guard convey_curl_easy_getinfo_socket(easy.raw, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK, socket >= 0 else {
            finish(URLError(.networkConnectionLost, userInfo: [NSLocalizedDescriptionKey: "curl connected but has no socket",
                                                               NSURLErrorFailingURLErrorKey: url]))
            return
        }
        state.value.socket = socket
        state.value.phase = .open
        state.value.connecting?.resume()
        state.value.connecting = nil
        pump()
    }

    /// Queues a write behind the others and sends what the socket takes now.
    func enqueueWrite(_ bytes: [UInt8], _ continuation: CheckedContinuation<Void, any Error>) {
        guard state.value.phase == .open || state.value.phase == .connecting else {
            continuation.resume(throwing: state.value.failure ?? Self.closedError(url))
            return
        }
        state.value.writes.append(PendingWrite(bytes: bytes, continuation: continuation))
        pump()
    }

    /// Waits for the next bytes: reads at once what is there, else when the socket is readable.
    func enqueueRead(_ continuation: CheckedContinuation<[UInt8]?, any Error>) {
        if state.value.reachedEnd { return continuation.resume(returning: nil) }
        guard state.value.phase == .open || state.value.phase == .connecting else {
            continuation.resume(throwing: state.value.failure ?? Self.closedError(url))
            return
        }
        guard state.value.reading == nil else {
            continuation.resume(throwing: URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "a read is already waiting on this connection",
                                                                        NSURLErrorFailingURLErrorKey: url]))
            return
        }
        state.value.reading = continuation
        pump()
    }

    /// The socket is ready for what the loop watched it for.
    func socketReady(_ events: Int16) {
        pump()
    }

    /// Sends and reads what the socket allows now, then watches it for whatever still waits.
    private func pump() {
        guard state.value.phase == .open, let easy = state.value.easy else { return }
        var wantsWritable = false
        while !state.value.writes.isEmpty {
            let write = state.value.writes[0]
            var sent = 0
            let result = write.bytes.withUnsafeBytes { bytes in
                curl_easy_send(easy.raw, bytes.baseAddress.map { $0 + write.sent }, bytes.count - write.sent, &sent)
            }
            if result == CURLE_AGAIN {
                wantsWritable = true
                break
            }
            guard result == CURLE_OK else { return fail(result, easy: easy) }
            state.value.writes[0].sent += sent
            if state.value.writes[0].sent == write.bytes.count {
                state.value.writes.removeFirst().continuation.resume()
            }
        }
        var wantsReadable = false
        if let reading = state.value.reading {
            if state.value.readBuffer.count != Self.readSize { state.value.readBuffer = [UInt8](repeating: 0, count: Self.readSize) }
            var received = 0
            let result = state.value.readBuffer.withUnsafeMutableBytes { buffer in
                curl_easy_recv(easy.raw, buffer.baseAddress, buffer.count, &received)
            }
            switch result {
            case CURLE_AGAIN:
                wantsReadable = true
            case CURLE_OK:
                state.value.reading = nil
                if received == 0 {
                    state.value.reachedEnd = true
                    reading.resume(returning: nil)
                } else {
                    reading.resume(returning: Array(state.value.readBuffer[..<received]))
                }
            default:
                return fail(result, easy: easy)
            }
        }
        let events = Int16((wantsReadable ? CURL_WAIT_POLLIN : 0) | (wantsWritable ? CURL_WAIT_POLLOUT : 0))
        if events != state.value.watched {
            state.value.watched = events
            loop.watch(state.value.socket, events: events, for: self)
        }
    }

    private func fail(_ result: CURLcode, easy: CurlEasyHandle) {
        finish(CurlErrors.urlError(for: result, osErrno: easy.info(CURLINFO_OS_ERRNO), message: easy.errorMessage, url: url, bodyReadFailed: false))
    }

    /// Closes the connection from any thread; on the loop's, at once.
    func close() {
        loop.runOnLoop { [self] in finish(Self.closedError(url)) }
    }

    /// Ends the connection: the handle leaves the multi handle (closing the connection), and
    /// everything that waits fails with `failure`. On the loop's thread.
    private func finish(_ failure: URLError) {
        guard state.value.phase != .closed else { return }
        if let easy = state.value.easy {
            loop.removeRawConnection(easy: easy.raw, socket: state.value.socket)
        }
        state.value.phase = .closed
        state.value.failure = failure
        state.value.easy = nil
        let writes = state.value.writes
        state.value.writes = []
        let reading = state.value.reading
        state.value.reading = nil
        let connecting = state.value.connecting
        state.value.connecting = nil
        connecting?.resume(throwing: failure)
        for write in writes { write.continuation.resume(throwing: failure) }
        reading?.resume(throwing: failure)
    }

    private static func closedError(_ url: URL) -> URLError {
        URLError(.cancelled, userInfo: [NSLocalizedDescriptionKey: "the connection was closed", NSURLErrorFailingURLErrorKey: url])
    }
}
#endif
