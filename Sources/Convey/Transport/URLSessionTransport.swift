import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URLSession transport (the default on Apple platforms), driven through classic
/// delegate-based data tasks.
///
/// Why not `data(for:)`: on Linux the async API skips most delegate callbacks, and Convey needs
/// the authentication challenge to stop a 401 Basic response from hanging forever (a
/// swift-corelibs-foundation bug). URLCache is off: on Linux its key ignores the query string.
public final class URLSessionTransport: ConveyTransport {
    private let session: URLSession
    private let delegate: SessionDelegate

    /// Creates a transport with its own session.
    ///
    /// - Parameters:
    ///   - timeout: the session's default idle timeout; each request carries its own as well.
    ///   - waitsForConnectivity: whether requests wait for a network instead of failing at once
    ///     (Apple platforms; URLSession on Linux always fails at once).
    public init(timeout: Duration = .seconds(60), waitsForConnectivity: Bool = false) {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout.clampedTimeout.timeInterval
        #if canImport(Darwin)
        configuration.waitsForConnectivity = waitsForConnectivity
        #endif
        delegate = SessionDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var urlRequest = request.urlRequest
        if let url = urlRequest.url, !AllowedSchemes.allow(url) { throw AllowedSchemes.unsupported(url) }
        let timeout = request.timeout.clampedTimeout
        let watchdogNeeded = Self.needsWatchdog(timeout)
        urlRequest.timeoutInterval = watchdogNeeded ? timeout.timeInterval.rounded(.up) + 1 : timeout.timeInterval
        #if canImport(Darwin)
        urlRequest.allowsExpensiveNetworkAccess = request.allowsExpensiveNetworkAccess
        urlRequest.allowsConstrainedNetworkAccess = request.allowsConstrainedNetworkAccess
        #endif
        let task = if let file = request.bodyFile {
            session.uploadTask(with: urlRequest, fromFile: file)
        } else {
            session.dataTask(with: urlRequest)
        }
        let handle = SendableTask(task)
        let watchdog = watchdogNeeded ? startWatchdog(for: handle, idleTimeout: timeout) : nil
        defer {
            watchdog?.cancel()
            request.cancellation?.unregister()
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.begin(task, continuation: continuation, progress: request.progress)
                task.resume()
                request.cancellation?.register { handle.task.cancel() }
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
    private func startWatchdog(for handle: SendableTask, idleTimeout: Duration) -> Task<Void, Never> {
        Task { [delegate] in
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

/// Lets the cancellation handler, which may run on any thread, cancel the task.
private struct SendableTask: @unchecked Sendable {
    let task: URLSessionTask
    init(_ task: URLSessionTask) { self.task = task }
}

/// Collects each transfer's response and bytes and resumes its continuation exactly once.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Transfer {
        let continuation: CheckedContinuation<TransportResponse, any Error>
        let progressHandler: (@Sendable (TransferProgress) -> Void)?
        var progress = TransferProgress()
        var response: HTTPURLResponse?
        var data = Data()
        var lastActivity = ContinuousClock.now
        /// Set when Convey's own idle watchdog cancelled the transfer.
        var timedOut = false
        /// The 401/407 a credential-less challenge answered, kept because cancelling the challenge loses it.
        var challengeResponse: HTTPURLResponse?
        /// A redirect to a scheme other than http and https, which ends the transfer with an error.
        var refusedRedirect: ConveyError?
    }

    private let lock = NSLock()
    private var transfers: [Int: Transfer] = [:]

    func begin(_ task: URLSessionTask, continuation: CheckedContinuation<TransportResponse, any Error>,
               progress: (@Sendable (TransferProgress) -> Void)?) {
        lock.withLock { transfers[task.taskIdentifier] = Transfer(continuation: continuation, progressHandler: progress) }
    }

    /// Changes a transfer in place: a copy would copy its body on every appended chunk.
    private func update(_ task: URLSessionTask, _ change: (inout Transfer) -> Void) {
        lock.withLock {
            if let index = transfers.index(forKey: task.taskIdentifier) { change(&transfers.values[index]) }
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
        let snapshot: (handler: @Sendable (TransferProgress) -> Void, progress: TransferProgress)? = lock.withLock {
            guard var transfer = transfers[task.taskIdentifier], let handler = transfer.progressHandler else { return nil }
            change(&transfer.progress)
            transfers[task.taskIdentifier] = transfer
            return (handler, transfer.progress)
        }
        if let snapshot { snapshot.handler(snapshot.progress) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        update(dataTask) {
            $0.response = response as? HTTPURLResponse
            $0.lastActivity = .now
        }
        let expected = response.expectedContentLength
        report(dataTask) { $0.totalBytesToReceive = expected >= 0 ? expected : nil }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        update(dataTask) {
            $0.data.append(data)
            $0.lastActivity = .now
        }
        report(dataTask) { $0.bytesReceived += Int64(data.count) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        update(task) { $0.lastActivity = .now }
        report(task) {
            $0.bytesSent = totalBytesSent
            $0.totalBytesToSend = totalBytesExpectedToSend >= 0 ? totalBytesExpectedToSend : nil
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        guard let target = request.url, !AllowedSchemes.allow(target) else {
            completionHandler(request)
            return
        }
        let from = task.currentRequest?.url ?? response.url ?? target
        update(task) { $0.refusedRedirect = AllowedSchemes.refusedRedirect(from: from, to: target) }
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        #if canImport(Darwin)
        guard challenge.protectionSpace.authenticationMethod != NSURLAuthenticationMethodServerTrust else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        #endif
        // Convey sends credentials as headers and never answers challenges. Default handling of a
        // credential-less challenge hangs on Linux, so cancel it and report the status it carried.
        update(task) { $0.challengeResponse = challenge.failureResponse as? HTTPURLResponse }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let transfer = lock.withLock { transfers.removeValue(forKey: task.taskIdentifier) }
        guard let transfer else { return }
        if transfer.timedOut {
            transfer.continuation.resume(throwing: URLError(.timedOut))
        } else if let refused = transfer.refusedRedirect {
            transfer.continuation.resume(throwing: refused)
        } else if let challenged = transfer.challengeResponse {
            transfer.continuation.resume(returning: TransportResponse(response: challenged, data: transfer.data))
        } else if let error {
            transfer.continuation.resume(throwing: error)
        } else if let response = transfer.response {
            transfer.continuation.resume(returning: TransportResponse(response: response, data: transfer.data))
        } else {
            transfer.continuation.resume(throwing: URLError(.badServerResponse))
        }
    }
}
