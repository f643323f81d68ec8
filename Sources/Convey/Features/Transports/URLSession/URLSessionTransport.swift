import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Security)
import Security
#endif

/// The URLSession transport (the default on Apple platforms), driven through classic
/// delegate-based data tasks.
///
/// Why not `data(for:)`: on Linux the async API skips most delegate callbacks, and Convey needs
/// the authentication challenge to stop a 401 Basic response from hanging forever (a
/// swift-corelibs-foundation bug). URLCache is off: on Linux its key ignores the query string.
/// A redirect is returned as the response: the pipeline follows it, each hop a send of its own.
///
/// On Linux a request whose method is not idempotent (POST, PATCH) goes out on a session of its
/// own, so on a connection of its own: FoundationNetworking's libcurl re-sends a request on a
/// fresh connection when a reused one died before any response byte (a bodyless POST arrives
/// twice; one with a body hangs until its timeout), and Convey cannot set libcurl options there.
///
/// On Linux it refuses streams (`stream()`, `events()`, any sink that `needsBackPressure`) with
/// `ConveyError.transport` of kind `.other` (see `isRefusedStream`): FoundationNetworking cannot
/// pause a transfer and queues the body for the delegate without bound, so no memory limit
/// could hold. `CurlTransport`, the Linux default, streams within its bound.
///
/// On Apple platforms a reader slower than the network suspends the task (`suspend()`) until it
/// catches up. URLSession's own request timeout may still count a suspended task as idle, so a
/// reader that keeps a transfer paused for longer than the idle timeout can end it with
/// `URLError.timedOut`.
///
/// Cookies live in a jar of the transport's own, in memory, on every platform
/// (`TransportCookieJar`), never in the process's shared `HTTPCookieStorage`.
@_spi(Transport) public final class URLSessionTransport: ConveyTransport {
    private let session: URLSession
    /// A session that goes around the proxy, for hosts it excludes (`ExcludedProxyHosts`), and
    /// its own delegate (task identifiers are unique only within a session), or `nil`.
    private let direct: (session: URLSession, delegate: SessionDelegate)?
    private let delegate: SessionDelegate
    private let timeout: Duration
    private let waitsForConnectivity: Bool
    /// The connection settings, for the sessions made per request (Linux, non-idempotent methods).
    private let connection: ConnectionSettings
    /// This transport's cookies (URLSession's storage is process-wide and on disk).
    private let cookies = TransportCookieJar()
    /// Why every request fails: TLS, proxy or HTTP-version settings this transport cannot honour here.
    private let unusableSettings: URLError?

    /// Creates a transport with its own session.
    ///
    /// What it does with `tls`, `proxy` and `httpVersion` depends on the platform (see
    /// `URLSessionSettings` and Docs/transports.md): on Apple platforms trust roots, pins,
    /// TLS 1.3, verification off, a PKCS#12 client certificate, `.direct`, HTTP proxies with
    /// credentials and excluded hosts, and, from iOS 17 and macOS 14, SOCKS5; on Linux, where
    /// FoundationNetworking offers no hook, only the defaults. Anything it cannot do fails every
    /// request, before anything is sent, with a `URLError` (`secureConnectionFailed` for TLS,
    /// `unsupportedURL` otherwise) naming it and why, rather than connect with less protection, or
    /// another way, than asked for. On Linux, `CurlTransport` does all of them.
    ///
    /// - Parameters:
    ///   - timeout: the session's default idle timeout; each request carries its own as well.
    ///   - waitsForConnectivity: whether requests wait for a network instead of failing at once
    ///     (Apple platforms; URLSession on Linux always fails at once).
    ///   - tls: trust roots, pins, minimum version, client certificate, verification.
    ///   - proxy: `.environment` (the system's settings, or on Linux the proxy variables), `.direct`, or a proxy.
    ///   - httpVersion: `.automatic`, or `.http3` (`assumesHTTP3Capable` on Apple platforms); the
    ///     others are refused: URLSession has no switch for them.
    public init(timeout: Duration = .seconds(60), waitsForConnectivity: Bool = false,
                tls: TLSConfiguration = TLSConfiguration(), proxy: ProxyConfiguration = .environment,
                httpVersion: HTTPVersionPreference = .automatic) {
        self.timeout = timeout
        self.waitsForConnectivity = waitsForConnectivity
        var unusable = URLSessionSettings.refusal(tls: tls, proxy: proxy, httpVersion: httpVersion, on: .current)?.error
        var answers = ChallengeAnswers()
        #if canImport(Darwin)
        if unusable == nil {
            switch Self.challengeAnswers(tls: tls, proxy: proxy) {
            case .success(let prepared): answers = prepared
            case .failure(let failure): unusable = failure
            }
        }
        #endif
        unusableSettings = unusable
        var excluded: ExcludedProxyHosts?
        if case .through(let through) = proxy.route, let hosts = try? through.excluded.get(), !hosts.entries.isEmpty { excluded = hosts }
        connection = ConnectionSettings(requiresTLS13: tls.requiresTLS13, proxy: proxy, assumesHTTP3: httpVersion == .http3, excludedHosts: excluded)
        delegate = SessionDelegate(cookies: cookies, answers: answers)
        session = URLSession(configuration: Self.configuration(timeout: timeout, waitsForConnectivity: waitsForConnectivity, connection: connection),
                             delegate: delegate, delegateQueue: nil)
        if excluded != nil {
            var directConnection = connection
            directConnection.proxy = .direct
            directConnection.excludedHosts = nil
            let directDelegate = SessionDelegate(cookies: cookies, answers: answers)
            direct = (URLSession(configuration: Self.configuration(timeout: timeout, waitsForConnectivity: waitsForConnectivity,
                                                                   connection: directConnection),
                                 delegate: directDelegate, delegateQueue: nil), directDelegate)
        } else {
            direct = nil
        }
    }

    /// The settings every session of this transport is made with.
    struct ConnectionSettings: Sendable {
        var requiresTLS13: Bool
        var proxy: ProxyConfiguration
        var assumesHTTP3: Bool
        /// Hosts that go through the `direct` session instead.
        var excludedHosts: ExcludedProxyHosts?
    }

    private static func configuration(timeout: Duration, waitsForConnectivity: Bool, connection: ConnectionSettings) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout.clampedTimeout.timeInterval
        // Cookies are the transport's own (`cookies`), on every platform.
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        #if canImport(Darwin)
        configuration.waitsForConnectivity = waitsForConnectivity
        configuration.tlsMinimumSupportedProtocolVersion = connection.requiresTLS13 ? .TLSv13 : .TLSv12
        configuration.route(through: connection.proxy)
        #endif
        return configuration
    }

    /// The session and delegate for a request: the shared ones; on Apple platforms the one that
    /// goes around the proxy for a host it excludes; on Linux a session of its own for a method
    /// that must not be re-sent (see the type's documentation). `true` when the session is the
    /// request's own, to be invalidated after it.
    private func channel(for request: URLRequest) -> (URLSession, SessionDelegate, ownSession: Bool) {
        #if canImport(FoundationNetworking)
        if !HTTPMethod(rawValue: request.httpMethod ?? "GET").isIdempotent {
            let delegate = SessionDelegate(cookies: cookies, answers: ChallengeAnswers())
            let session = URLSession(configuration: Self.configuration(timeout: timeout, waitsForConnectivity: waitsForConnectivity, connection: connection),
                                     delegate: delegate, delegateQueue: nil)
            return (session, delegate, true)
        }
        #endif
        if let direct, let host = request.url?.host(), connection.excludedHosts?.excludes(host: host) == true {
            return (direct.session, direct.delegate, false)
        }
        return (session, delegate, false)
    }

    deinit {
        session.finishTasksAndInvalidate()
        direct?.session.finishTasksAndInvalidate()
    }

    /// `true`: a run's stop cancels the task through `TransportRequest.cancellation`.
    public var registersExchangeCancellation: Bool { true }

    public func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        var urlRequest = request.request.urlRequest
        if let url = urlRequest.url, !AllowedSchemes.allow(url) { throw AllowedSchemes.unsupported(url) }
        if let unusableSettings {
            var userInfo = unusableSettings.userInfo
            userInfo[NSURLErrorFailingURLErrorKey] = urlRequest.url
            throw URLError(unusableSettings.code, userInfo: userInfo)
        }
        #if canImport(FoundationNetworking)
        if sink.needsBackPressure { throw Self.refusedStream(url: urlRequest.url) }
        #endif
        cookies.addCookies(to: &urlRequest)
        let timeout = request.timeout.clampedTimeout
        let watchdogNeeded = Self.needsWatchdog(timeout)
        urlRequest.timeoutInterval = watchdogNeeded ? timeout.timeInterval.rounded(.up) + 1 : timeout.timeInterval
        #if canImport(Darwin)
        urlRequest.allowsExpensiveNetworkAccess = request.allowsExpensiveNetworkAccess
        urlRequest.allowsConstrainedNetworkAccess = request.allowsConstrainedNetworkAccess
        urlRequest.assumesHTTP3Capable = connection.assumesHTTP3
        #endif
        let (session, delegate, ownSession) = channel(for: urlRequest)
        defer { if ownSession { session.finishTasksAndInvalidate() } }
        let task = if let file = request.bodyFile {
            session.uploadTask(with: urlRequest, fromFile: file)
        } else {
            session.dataTask(with: urlRequest)
        }
        let handle = SendableTask(task)
        // The run's stops (by tag or type, the total timeout) cancel the task as its Swift task's cancellation does.
        let stop = RunStop(handle)
        guard request.cancellation.register(stop) else { throw URLError(.cancelled, userInfo: [NSURLErrorFailingURLErrorKey: urlRequest.url as Any]) }
        let watchdog = watchdogNeeded ? startWatchdog(for: handle, delegate: delegate, idleTimeout: timeout) : nil
        defer { watchdog?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.begin(task, continuation: continuation, sink: sink, request: request)
                // Cancelled before `begin`: the handler's cancel may have completed the task while
                // nobody waited for it, and a cancelled task never completes again.
                if Task.isCancelled || stop.fired {
                    delegate.endUnstarted(task)
                    return
                }
                task.resume()
            }
        } onCancel: {
            handle.task.cancel()
        }
    }

    /// Whether Convey must enforce the idle timeout itself. URLSession on Linux (libcurl) truncates
    /// timeouts to whole seconds, and one under a second fires at once; whole seconds work.
    private static func needsWatchdog(_ timeout: Duration) -> Bool {
        #if canImport(FoundationNetworking)
        let seconds = timeout.timeInterval
        return seconds < 1 || seconds != seconds.rounded()
        #else
        return false
        #endif
    }

    /// Cancels the transfer as timed out once no bytes have moved for `idleTimeout`.
    private func startWatchdog(for handle: SendableTask, delegate: SessionDelegate, idleTimeout: Duration) -> Task<Void, Never> {
        Task {
            var deadline = ContinuousClock.now + idleTimeout
            while (try? await Task.sleep(until: deadline)) != nil {
                guard let lastActivity = delegate.lastActivity(of: handle.task) else { return }
                deadline = lastActivity + idleTimeout
                if deadline <= .now {
                    delegate.markTimedOut(handle.task)
                    handle.task.cancel()
                    return
                }
            }
        }
    }
}

extension URLSessionTransport {
    /// The code of the failure a refused stream carries: `URLError.resourceUnavailable`.
    private static var refusedStreamCode: Int { URLError.Code.resourceUnavailable.rawValue }

    /// Why a stream is refused on Linux, and what to use instead.
    static func refusedStream(url: URL?) -> ConveyError {
        .transport(.other, url: url, code: refusedStreamCode,
                   reason: "URLSessionTransport on Linux does not stream: FoundationNetworking cannot pause a transfer and buffers "
                       + "the body without bound before Convey sees it. Use CurlTransport (the Linux default) for stream() and events()")
    }

    /// Whether a failure is the refusal of a stream (on Linux), which no retry or reconnection changes.
    static func isRefusedStream(_ failure: TransportFailure, code: Int) -> Bool {
        failure == .other && code == refusedStreamCode
    }
}

/// Lets the cancellation handler, which may run on any thread, cancel the task.
private struct SendableTask: @unchecked Sendable {  // guarded by: URLSessionTask itself: cancel, suspend and resume may be called from any thread (not marked Sendable on every SDK)
    let task: URLSessionTask
    init(_ task: URLSessionTask) { self.task = task }
}

/// Feeds each transfer's head and body to its sink and resumes its continuation exactly once.
///
/// Back-pressure: when the sink refuses bytes they wait in `pending`. On Apple platforms the task
/// is suspended until the sink is ready. FoundationNetworking on Linux cannot pause a transfer
/// (it traps): there a file's writer is waited for on the delegate thread (`offerWaiting`), and
/// for any other sink up to `maximumPendingBytes` wait and a consumer further behind ends the
/// transfer with `URLError(.dataLengthExceedsMaximum)`.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {  // guarded by: its NSLock, for `transfers` (which hold Foundation objects not marked Sendable everywhere)
    private struct Transfer {
        let continuation: CheckedContinuation<ExchangeMetrics, any Error>
        let sink: any ResponseBodySink
        let progressHandler: (@Sendable (TransferProgress) -> Void)?
        let started = ContinuousClock.now
        var progress = TransferProgress()
        var deliveredHead = false
        var lastActivity = ContinuousClock.now
        var metrics = ExchangeMetrics()
        /// What the request's head as sent is made from, when the request asks for it.
        let sentHead: URLSessionSentHead?
        /// Whether the sink refused bytes and has not caught up: later bytes queue behind them.
        var behind = false
        /// Bytes the sink refused or that arrived while it was behind, in order.
        var pending: [Data] = []
        var pendingCount = 0
        /// The task finished while bytes were still pending: complete once they are delivered.
        var completedWhilePending = false
        /// Set when Convey's own idle watchdog cancelled the transfer.
        var timedOut = false
        /// Why the sink stopped the transfer.
        var sinkFailure: (any Error)?
        /// The 401/407 a credential-less challenge answered, kept because cancelling the challenge loses it (Linux).
        var challengeResponse: HTTPURLResponse?
        /// Why Convey refused the server's certificate chain (Apple platforms), which URLSession reports as a cancellation.
        var trustFailure: URLError?
        /// Whether URLSession delivered the task's metrics (Apple platforms).
        var metricsCollected = false
        /// How the task completed, held while its metrics have not arrived yet (Apple platforms).
        var completionAwaitingMetrics: Completion?
    }

    /// How a task completed.
    private struct Completion {
        let error: (any Error)?
    }

    /// How long a completion waits for metrics that URLSession delivers after it.
    private static let metricsWait: DispatchTimeInterval = .milliseconds(250)

    private let lock = NSLock()
    private var transfers: [Int: Transfer] = [:]
    /// The transport's own cookie jar.
    private let cookies: TransportCookieJar
    /// What answers TLS and proxy challenges (Apple platforms).
    private let answers: ChallengeAnswers

    init(cookies: TransportCookieJar, answers: ChallengeAnswers) {
        self.cookies = cookies
        self.answers = answers
    }
    private static var maximumPendingBytes: Int { 16 << 20 }

    func begin(_ task: URLSessionTask, continuation: CheckedContinuation<ExchangeMetrics, any Error>,
               sink: any ResponseBodySink, request: TransportRequest) {
        lock.withLock {
            transfers[task.taskIdentifier] = Transfer(continuation: continuation, sink: sink, progressHandler: request.progress,
                                                      sentHead: request.capturesSentHead ? URLSessionSentHead(request) : nil)
        }
    }

    /// Ends a transfer that was cancelled before it was resumed, with `URLError(.cancelled)`.
    func endUnstarted(_ task: URLSessionTask) {
        guard let transfer = lock.withLock({ transfers.removeValue(forKey: task.taskIdentifier) }) else { return }
        task.cancel()
        transfer.continuation.resume(throwing: URLError(.cancelled, userInfo: task.originalRequest?.url.map {
            [NSURLErrorFailingURLErrorKey: $0]
        } ?? [:]))
    }

    /// Changes a transfer in place and returns what `change` returns, or `nil` once it is over.
    @discardableResult
    private func update<Result>(_ task: URLSessionTask, _ change: (inout Transfer) -> Result) -> Result? {
        lock.withLock {
            guard let index = transfers.index(forKey: task.taskIdentifier) else { return nil }
            return change(&transfers.values[index])
        }
    }

    /// When bytes last moved, or `nil` once the transfer is over.
    func lastActivity(of task: URLSessionTask) -> ContinuousClock.Instant? {
        lock.withLock { transfers[task.taskIdentifier]?.lastActivity }
    }

    func markTimedOut(_ task: URLSessionTask) {
        update(task) { $0.timedOut = true }
    }

    /// Updates the transfer's progress and reports it, outside the lock.
    private func report(_ task: URLSessionTask, _ change: (inout TransferProgress) -> Void) {
        let snapshot: (handler: @Sendable (TransferProgress) -> Void, progress: TransferProgress)? = update(task) { transfer in
            guard let handler = transfer.progressHandler else { return nil }
            change(&transfer.progress)
            return (handler, transfer.progress)
        } ?? nil
        if let snapshot { snapshot.handler(snapshot.progress) }
    }

    /// Ends the transfer because its sink threw: the exchange fails with that error at once, and
    /// the task is cancelled.
    ///
    /// The exchange does not wait for URLSession to confirm the cancel: FoundationNetworking's
    /// `cancel()` waits for its work queue, which stays busy for as long as bytes keep arriving (a
    /// decompression bomb is inflated to its end first). So the cancel is sent from a thread of
    /// the global queue, and whatever this delegate queue is still handed for the task is dropped
    /// on arrival, its transfer gone: memory stays bounded, though the inflating goes on in the
    /// background until FoundationNetworking stops.
    private func fail(_ task: URLSessionTask, with error: any Error) {
        let first = update(task) { transfer -> Bool in
            guard transfer.sinkFailure == nil else { return false }
            transfer.sinkFailure = error
            return true
        }
        guard first == true else { return }
        finish(task, error: nil)
        let handle = SendableTask(task)
        DispatchQueue.global().async { handle.task.cancel() }
    }

    /// Never follows: the redirect is the response, and the pipeline follows it (`RedirectStep`).
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let sink = update(dataTask) { transfer -> (any ResponseBodySink) in
            transfer.lastActivity = .now
            transfer.deliveredHead = true
            transfer.metrics.firstByte = transfer.started.duration(to: .now)
            return transfer.sink
        }
        if let http = response as? HTTPURLResponse { cookies.store(from: http) }
        if let sink, let http = response as? HTTPURLResponse {
            do {
                try sink.receive(ResponseHead(http, url: dataTask.currentRequest?.url))
            } catch {
                fail(dataTask, with: error)
                completionHandler(.cancel)
                return
            }
        }
        let expected = response.expectedContentLength
        report(dataTask) { $0.totalBytesToReceive = expected >= 0 ? expected : nil }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // A transfer that ended (over the body limit, say) is gone: what still arrives is dropped.
        var ended = true
        let sink = update(dataTask) { transfer -> (any ResponseBodySink)? in
            ended = false
            transfer.lastActivity = .now
            transfer.metrics.bytesReceived = (transfer.metrics.bytesReceived ?? 0) + Int64(data.count)
            guard !transfer.behind else {
                transfer.pending.append(data)
                transfer.pendingCount += data.count
                return nil
            }
            return transfer.sink
        } ?? nil
        guard !ended else { return }
        report(dataTask) { $0.bytesReceived += Int64(data.count) }
        if let sink {
            offer(data, to: sink, of: dataTask)
        } else if (update(dataTask) { $0.pendingCount } ?? 0) > Self.maximumPendingBytes {
            fail(dataTask, with: URLError(.dataLengthExceedsMaximum, userInfo: [NSLocalizedDescriptionKey: Self.fellBehindReason]))
        }
    }

    /// Why a transfer ended when its reader fell too far behind.
    private static var fellBehindReason: String {
        #if canImport(Darwin)
        "the reader fell more than \(maximumPendingBytes) bytes behind: URLSession kept delivering bytes after the task was suspended"
        #else
        "the reader fell more than \(maximumPendingBytes) bytes behind, and URLSession on Linux cannot pause a transfer"
        #endif
    }

    /// Offers `data` to the sink; when it is full, keeps it pending and waits for the sink.
    private func offer(_ data: Data, to sink: any ResponseBodySink, of task: URLSessionTask) {
        do {
            #if canImport(Darwin)
            guard try !data.withUnsafeBytes({ try sink.offer($0) }) else { return }
            #else
            guard try !offerWaiting(data, to: sink, of: task) else { return }
            #endif
        } catch {
            fail(task, with: error)
            return
        }
        update(task) {
            $0.behind = true
            $0.pending.insert(data, at: 0)
            $0.pendingCount += data.count
        }
        #if canImport(Darwin)
        task.suspend()
        #endif
        sink.whenReady { [weak self] in self?.drainPending(of: SendableTask(task)) }
    }

    #if !canImport(Darwin)
    /// Offers `data` to a sink that does not need the transfer paused (a file's writer), waiting on
    /// this delegate thread, URLSession's own, until it takes them: FoundationNetworking cannot
    /// pause a transfer, so it buffers meanwhile, as for any slow delegate, and the download goes
    /// on instead of failing once `maximumPendingBytes` wait. `false` when the sink still refuses
    /// (one that needs the transfer paused, or the transfer ended meanwhile): the bytes go pending.
    private func offerWaiting(_ data: Data, to sink: any ResponseBodySink, of task: URLSessionTask) throws -> Bool {
        while true {
            if try data.withUnsafeBytes({ try sink.offer($0) }) { return true }
            guard !sink.needsBackPressure else { return false }
            let ready = DispatchSemaphore(value: 0)
            sink.whenReady { ready.signal() }
            // Checked each second: a transfer cancelled meanwhile stops waiting. A writer that
            // drains is no idle network: the idle watchdog is told bytes still move.
            while ready.wait(timeout: .now() + .seconds(1)) == .timedOut {
                if update(task, { $0.lastActivity = .now }) == nil { return false }
            }
            update(task) { $0.lastActivity = .now }
        }
    }
    #endif

    /// Delivers pending bytes to a sink that became ready, then lets the transfer go on or finish.
    private func drainPending(of handle: SendableTask) {
        let task = handle.task
        while let (next, sink) = update(task, { transfer -> (Data, any ResponseBodySink)? in
            guard !transfer.pending.isEmpty else {
                transfer.behind = false
                return nil
            }
            let next = transfer.pending.removeFirst()
            transfer.pendingCount -= next.count
            return (next, transfer.sink)
        }) ?? nil {
            do {
                if try !next.withUnsafeBytes({ try sink.offer($0) }) {
                    update(task) {
                        $0.pending.insert(next, at: 0)
                        $0.pendingCount += next.count
                    }
                    sink.whenReady { [weak self] in self?.drainPending(of: handle) }
                    return
                }
            } catch {
                fail(task, with: error)
                return
            }
        }
        if update(task, { $0.completedWhilePending }) == true {
            finish(task, error: nil)
        } else {
            #if canImport(Darwin)
            task.resume()
            #endif
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        update(task) {
            $0.lastActivity = .now
            $0.metrics.bytesSent = totalBytesSent
        }
        report(task) {
            $0.bytesSent = totalBytesSent
            $0.totalBytesToSend = totalBytesExpectedToSend >= 0 ? totalBytesExpectedToSend : nil
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        #if canImport(Darwin)
        switch challenge.protectionSpace.authenticationMethod {
        case NSURLAuthenticationMethodServerTrust:
            guard let evaluator = answers.serverTrust, let trust = challenge.protectionSpace.serverTrust else {
                completionHandler(.performDefaultHandling, nil)
                return
            }
            switch evaluator.decide(trust, host: challenge.protectionSpace.host) {
            case .accept:
                completionHandler(.useCredential, URLCredential(trust: trust))
            case .reject(let code, let reason):
                // Cancelling the challenge ends the task as cancelled: `finish` reports this instead.
                update(task) { $0.trustFailure = URLError(code, userInfo: [NSLocalizedDescriptionKey: reason]) }
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
            return
        case NSURLAuthenticationMethodClientCertificate:
            // The configured certificate, else none: a server that requires one then ends the
            // handshake, a TLS failure (`clientCertificateRequired`), never a cancellation.
            if let credential = answers.clientCertificate {
                completionHandler(.useCredential, credential)
            } else {
                completionHandler(.performDefaultHandling, nil)
            }
            return
        default:
            // A proxy's 407: its credentials once; a second challenge means they were refused,
            // and the 407 comes back as the response, as on CurlTransport.
            if challenge.protectionSpace.isProxy(), let credential = answers.proxy, challenge.previousFailureCount == 0 {
                completionHandler(.useCredential, credential)
                return
            }
        }
        // Convey sends credentials as headers and never answers a 401's or another 407's
        // challenge: rejecting its protection space lets URLSession go on without a credential,
        // and the response, body included, reaches the task as any other does.
        completionHandler(.rejectProtectionSpace, nil)
        #else
        // Default handling of a credential-less challenge hangs on Linux, so cancel it and report
        // the status it carried; its body is lost with it.
        update(task) { $0.challengeResponse = challenge.failureResponse as? HTTPURLResponse }
        completionHandler(.cancelAuthenticationChallenge, nil)
        #endif
    }

    #if canImport(Darwin)
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        defer { releaseCompletion(of: task) }
        guard let last = metrics.transactionMetrics.last, let start = last.fetchStartDate else { return }
        func since(_ date: Date?) -> Duration? { date.map { .seconds($0.timeIntervalSince(start)) } }
        update(task) {
            $0.metrics.nameLookup = since(last.domainLookupEndDate)
            $0.metrics.connect = since(last.connectEndDate)
            $0.metrics.tlsHandshake = since(last.secureConnectionEndDate)
            $0.metrics.firstByte = since(last.responseStartDate)
            $0.metrics.httpVersion = last.networkProtocolName.map { $0 == "h2" ? "HTTP/2" : $0 == "h3" ? "HTTP/3" : $0.uppercased() }
            $0.metrics.reusedConnection = last.isReusedConnection
        }
    }

    /// Marks the metrics as in (or given up on) and finishes a completion that waited for them.
    private func releaseCompletion(of task: URLSessionTask) {
        let held = update(task) { transfer -> Completion? in
            transfer.metricsCollected = true
            defer { transfer.completionAwaitingMetrics = nil }
            return transfer.completionAwaitingMetrics
        } ?? nil
        if let held { finish(task, error: held.error) }
    }
    #endif

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let waits = update(task) { transfer -> Bool in
            if transfer.behind, error == nil {
                transfer.completedWhilePending = true
                return true
            }
            #if canImport(Darwin)
            // URLSession may deliver the metrics after the completion: wait for them, briefly.
            if !transfer.metricsCollected {
                transfer.completionAwaitingMetrics = Completion(error: error)
                return true
            }
            #endif
            return false
        }
        if waits != true { finish(task, error: error) }
        #if canImport(Darwin)
        if waits == true {
            let handle = SendableTask(task)
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.metricsWait) { [weak self] in
                self?.releaseCompletion(of: handle.task)
            }
        }
        #endif
    }

    /// URLSession on Linux reports most of libcurl's failures as `.unknown`: give them the code
    /// `CurlTransport` gives the same fault, from curl's message.
    private static func classified(_ error: any Error) -> any Error {
        #if canImport(FoundationNetworking)
        if let urlError = error as? URLError, urlError.code == .unknown || urlError.code == .unsupportedURL,
           let code = LibcurlMessages.code(for: urlError.localizedDescription) {
            return URLError(code, userInfo: urlError.userInfo)
        }
        #endif
        return error
    }

    /// Resumes the transfer's continuation with how it ended.
    private func finish(_ task: URLSessionTask, error: (any Error)?) {
        guard var transfer = lock.withLock({ transfers.removeValue(forKey: task.taskIdentifier) }) else { return }
        transfer.metrics.total = transfer.started.duration(to: .now)
        if let sentHead = transfer.sentHead, let sent = task.currentRequest ?? task.originalRequest {
            transfer.metrics.sentHead = sentHead.text(sent: sent, httpVersion: transfer.metrics.httpVersion)
        }
        if let failure = transfer.sinkFailure {
            transfer.continuation.resume(throwing: failure)
        } else if let failure = transfer.trustFailure {
            var userInfo = failure.userInfo
            userInfo[NSURLErrorFailingURLErrorKey] = task.originalRequest?.url
            transfer.continuation.resume(throwing: URLError(failure.code, userInfo: userInfo))
        } else if transfer.timedOut {
            transfer.continuation.resume(throwing: URLError(.timedOut))
        } else if let challenged = transfer.challengeResponse {
            do {
                if !transfer.deliveredHead { try transfer.sink.receive(ResponseHead(challenged, url: task.currentRequest?.url)) }
                transfer.continuation.resume(returning: transfer.metrics)
            } catch {
                transfer.continuation.resume(throwing: error)
            }
        } else if let error {
            transfer.continuation.resume(throwing: Self.classified(error))
        } else if transfer.deliveredHead {
            transfer.continuation.resume(returning: transfer.metrics)
        } else {
            transfer.continuation.resume(throwing: URLError(.badServerResponse))
        }
    }
}

/// A run's stop for one URLSession task: cancels it, and remembers that it did for a task not begun yet.
private final class RunStop: ExchangeCancelling, Sendable {
    private let handle: SendableTask
    private let stopped = InlineLocked(false)

    init(_ handle: SendableTask) {
        self.handle = handle
    }

    /// Whether the run stopped.
    var fired: Bool { stopped.value }

    func cancelExchange() {
        stopped.set(true)
        handle.task.cancel()
    }
}
