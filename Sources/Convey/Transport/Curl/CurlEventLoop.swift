#if canImport(CConveyCurlShim)
import CConveyCurlShim
import CCurl
import Foundation

/// The thread that drives one curl multi handle, and the only code that touches it.
///
/// Senders put transfers and cancellations in a lock-protected inbox and wake the thread with
/// `curl_multi_wakeup` when it sleeps. The thread adds and removes easy handles, runs
/// `curl_multi_perform`, enforces idle timeouts, and resumes each transfer's continuation when
/// it ends. Idle easy handles wait in a pool for the next request.
///
/// Every hand-over between threads goes through a pthread mutex (`NSLock`), which
/// ThreadSanitizer understands, so that a sanitizer run checks the whole protocol.
final class CurlEventLoop: @unchecked Sendable {
    private enum Command {
        case start(CurlTransfer)
        case cancel(CurlTransfer)
        case resume(CurlTransfer)
    }

    /// What senders and the loop share, behind one lock.
    private struct Shared {
        var inbox: [Command] = []
        /// The loop is (about to be) blocked in `curl_multi_poll` and needs a wakeup.
        var sleeping = false
        /// The transport is gone: the loop ends once it has nothing left to run.
        var closing = false
    }

    /// The `CURLM *`, touched by the loop thread only, apart from `curl_multi_wakeup`.
    private let multi: UnsafeMutableRawPointer
    private let sharedLock = NSLock()
    private var shared = Shared()
    /// Easy handles waiting for their next request, behind a lock of their own.
    private let idleHandlesLock = NSLock()
    private var idleHandles: [CurlEasyHandle] = []
    /// Orders a finished transfer's results before its sender reads them (see `CurlTransfer.outcome`).
    let handOffLock = NSLock()
    private let maximumIdleHandles: Int
    /// The cookie jar and TLS sessions of this loop's transfers; `nil` if libcurl could not make one.
    private let share: OpaquePointer?
    private let handleDefaults: CurlHandleDefaults

    // Loop thread only.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var queues: CurlHostQueues<CurlTransfer>
    /// No idle timeout can expire before this instant (monotonic nanoseconds).
    private var nextTimeoutCheck = UInt64.max

    /// Creates the loop and starts its thread; `nil` when libcurl cannot make a multi handle.
    init?(configuration: CurlTransport.Configuration, maximumIdleHandles: Int) {
        guard CurlGlobal.initialized, let multi = curl_multi_init() else { return nil }
        self.multi = multi
        self.maximumIdleHandles = maximumIdleHandles
        let share = convey_curl_share_create()
        self.share = share
        handleDefaults = CurlHandleDefaults(share: share.flatMap { convey_curl_share_handle($0) },
                                            storesCookies: configuration.storesCookies,
                                            trustedCertificatesFile: configuration.trustedCertificatesFile?.path)
        let maximumConnectionsPerHost = configuration.maximumConnectionsPerHost
        queues = CurlHostQueues(connectionsPerOrigin: max(0, maximumConnectionsPerHost))
        let thread = Thread { [self] in run() }
        thread.name = "Convey curl event loop"
        thread.start()
    }

    /// Lets the thread end once it is idle; the transport calls it when it goes away.
    func close() {
        sharedLock.withLock {
            shared.closing = true
            // Inside the lock: once `closing` is seen, the loop may free the multi handle.
            if shared.sleeping { curl_multi_wakeup(multi) }
        }
    }

    // MARK: Senders' side, any thread

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

    /// Starts `transfer`; its continuation is resumed when it ends, however it ends.
    func start(_ transfer: CurlTransfer) {
        submit(.start(transfer))
    }

    /// Ends `transfer` at once with `URLError(.cancelled)`, if it has not ended yet.
    func cancel(_ transfer: CurlTransfer) {
        submit(.cancel(transfer))
    }

    /// Unpauses `transfer` once its sink can take bytes again.
    func resume(_ transfer: CurlTransfer) {
        submit(.resume(transfer))
    }

    private func submit(_ command: Command) {
        let wake = sharedLock.withLock {
            shared.inbox.append(command)
            defer { shared.sleeping = false }
            return shared.sleeping
        }
        // Outside the lock, so that the woken loop does not wait for it. Safe: the loop only
        // frees the multi handle after `close()`, which cannot run while a sender holds the transport.
        if wake { curl_multi_wakeup(multi) }
    }

    // MARK: The loop thread

    private func run() {
        var running: Int32 = 0
        // Swapped with the inbox, so that both arrays keep their storage from one round to the next.
        var commands: [Command] = []
        while true {
            commands.removeAll(keepingCapacity: true)
            let closing = sharedLock.withLock {
                swap(&commands, &shared.inbox)
                shared.sleeping = false
                return shared.closing
            }
            for command in commands { handle(command) }
            if closing, active.isEmpty, commands.isEmpty, queues.waitingCount == 0 { break }

            curl_multi_perform(multi, &running)
            finishCompletedTransfers()
            expireIdleTransfers()

            let goesToSleep = sharedLock.withLock {
                // Not when the transport closed meanwhile and nothing is left: then exit at once.
                shared.sleeping = shared.inbox.isEmpty && !(shared.closing && active.isEmpty && queues.waitingCount == 0)
                return shared.sleeping
            }
            if goesToSleep { curl_multi_poll(multi, nil, 0, pollTimeoutMilliseconds(), nil) }
        }
        curl_multi_cleanup(multi)
        idleHandlesLock.withLock { idleHandles.removeAll() }
        convey_curl_share_destroy(share)
    }

    private func handle(_ command: Command) {
        switch command {
        case .start(let transfer):
            guard !transfer.cancelRequested else {
                end(transfer, failure: URLError(.cancelled, userInfo: [NSURLErrorFailingURLErrorKey: transfer.url]))
                return
            }
            if queues.admit(transfer, origin: transfer.origin) { begin(transfer) }
        case .cancel(let transfer):
            let cancelled = URLError(.cancelled, userInfo: [NSURLErrorFailingURLErrorKey: transfer.url])
            if active[transfer.easy.raw] === transfer {
                remove(transfer)
                end(transfer, failure: cancelled)
            } else if queues.removeWaiting(transfer, origin: transfer.origin) {
                end(transfer, failure: cancelled)
            } else {
                transfer.cancelRequested = true
            }
        case .resume(let transfer):
            guard active[transfer.easy.raw] === transfer, transfer.isPaused else { return }
            transfer.isPaused = false
            transfer.lastActivity = CurlClock.now
            nextTimeoutCheck = min(nextTimeoutCheck, transfer.lastActivity &+ transfer.idleTimeout)
            // May deliver the paused bytes at once, from inside this call.
            _ = curl_easy_pause(transfer.easy.raw, CURLPAUSE_CONT)
        }
    }

    /// Puts an admitted transfer on the wire and starts its idle timer.
    private func begin(_ transfer: CurlTransfer) {
        let now = CurlClock.now
        transfer.lastActivity = now
        nextTimeoutCheck = min(nextTimeoutCheck, now &+ transfer.idleTimeout)
        let added = curl_multi_add_handle(multi, transfer.easy.raw)
        guard added == CURLM_OK else {
            end(transfer, failure: URLError(.unknown, userInfo: [
                NSLocalizedDescriptionKey: "curl could not start the transfer: \(String(cString: curl_multi_strerror(added)))",
                NSURLErrorFailingURLErrorKey: transfer.url,
            ]))
            admitNext(after: transfer, multiplexed: false)
            return
        }
        active[transfer.easy.raw] = transfer
    }

    /// Frees `transfer`'s place in its origin's queue and starts whoever may run now.
    private func admitNext(after transfer: CurlTransfer, multiplexed: Bool) {
        for next in queues.finished(origin: transfer.origin, multiplexed: multiplexed) { begin(next) }
    }

    private func finishCompletedTransfers() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                  let transfer = active[easy] else { continue }
            let result = convey_curl_message_result(message)
            handOffLock.withLock { transfer.result = result }
            let multiplexed = transfer.result == CURLE_OK
                && transfer.easy.info(CURLINFO_HTTP_VERSION) >= Int(CURL_HTTP_VERSION_2_0)
            remove(transfer, multiplexed: multiplexed)
            end(transfer, failure: nil)
        }
    }

    /// Ends transfers that have waited longer than their idle timeout for a byte to move.
    private func expireIdleTransfers() {
        let now = CurlClock.now
        guard now >= nextTimeoutCheck else { return }
        nextTimeoutCheck = .max
        var expired: [CurlTransfer] = []
        for transfer in active.values where !transfer.isPaused {
            let deadline = transfer.lastActivity &+ transfer.idleTimeout
            if deadline <= now {
                expired.append(transfer)
            } else {
                nextTimeoutCheck = min(nextTimeoutCheck, deadline)
            }
        }
        for transfer in expired {
            remove(transfer)
            end(transfer, failure: URLError(.timedOut, userInfo: [
                NSLocalizedDescriptionKey: "no data moved for the timeout of \(Double(transfer.idleTimeout) / 1e9) s",
                NSURLErrorFailingURLErrorKey: transfer.url,
            ]))
        }
    }

    /// How long `curl_multi_poll` may sleep: until the next idle timeout could expire (curl
    /// shortens it further for its own timers), at most a minute.
    private func pollTimeoutMilliseconds() -> Int32 {
        guard nextTimeoutCheck != .max else { return 60_000 }
        let now = CurlClock.now
        guard nextTimeoutCheck > now else { return 0 }
        return Int32(min((nextTimeoutCheck - now) / 1_000_000 + 1, 60_000))
    }

    /// Takes a running transfer off the wire and lets the next one to its origin start.
    private func remove(_ transfer: CurlTransfer, multiplexed: Bool = false) {
        curl_multi_remove_handle(multi, transfer.easy.raw)
        active[transfer.easy.raw] = nil
        admitNext(after: transfer, multiplexed: multiplexed)
    }

    /// Hands `transfer` back to its sender.
    private func end(_ transfer: CurlTransfer, failure: URLError?) {
        let continuation = handOffLock.withLock {
            transfer.failure = failure
            defer { transfer.continuation = nil }
            return transfer.continuation
        }
        continuation?.resume()
    }
}

/// `curl_global_init`, once per process, before the first handle.
private enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
}
#endif
