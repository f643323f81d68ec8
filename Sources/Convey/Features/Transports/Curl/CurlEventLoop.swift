#if os(Linux) && canImport(CConveyCurlShim)
internal import CConveyCurlShim
internal import CCurl
import Foundation
import Synchronization

/// An event loop: a thread that drives one libcurl multi handle for the transports that use it,
/// and runs nothing else of the app's: `@ConveyActor` has an executor of its own, so no hook or
/// app code ever holds up a transfer. `shared` serves every transport with one loop; a transport
/// with several (`CurlTransport.Configuration.eventLoops`) has loops of its own, which stop when
/// it goes away. Which transfer runs on which loop is the transport's `CurlHandlePool`'s call.
///
/// Commands from other threads (start, cancel, a stream reader making room) go through a
/// lock-protected inbox and wake the loop with `curl_multi_wakeup` only when it sleeps in
/// `curl_multi_poll`. Each round carries out the commands, lets curl move bytes
/// (`curl_multi_perform`), hands finished transfers back to their senders, and ends transfers
/// past their idle timeout; then it sleeps until a socket, a timer or a new command needs it.
///
/// Raw connections (`CurlRawConnection`, WebSockets) use the same loop: curl connects them as it
/// connects transfers, then the loop polls their sockets beside curl's and moves their bytes
/// when they are ready.
///
/// It is no task executor on purpose: a task preferring it would run `@ConveyActor`'s queued
/// jobs (app hooks among them) on this thread whenever that task held the actor.
///
/// Its thread's own state is a `CurlLoopBound`, which asserts (in debug) that only this thread
/// touches it; the inbox is behind a pthread mutex (`CurlLocked`), which ThreadSanitizer follows;
/// the multi handle is this thread's but for `curl_multi_wakeup`, which libcurl allows from any thread.
final class CurlEventLoop: Sendable {
    /// The loop every transport with one loop shares; it lives as long as the process.
    static let shared = CurlEventLoop()

    /// How many loops the process has made: the next one's number.
    private static let loopsMade = Atomic<Int>(0)

    private enum Command {
        case start(CurlTransfer)
        case cancel(CurlTransfer)
        case resume(CurlTransfer)
        /// Reports how many transfers of one transport are on the wire, counted on the loop thread.
        case countTransfers(CurlHandlePool, @Sendable (Int) -> Void)
        /// Ends the loop once no transfer is left; `owner` is released only after the multi handle
        /// and its connections are gone (they use its share handle).
        case stop(owner: any AnyObject & Sendable)
        /// Work of a raw connection (`CurlRawConnection`), run on the loop's thread between curl calls.
        case raw(@Sendable () -> Void)
    }

    /// What other threads and the loop share.
    private struct Shared {
        var inbox: [Command] = []
        /// The loop is (about to be) blocked in `curl_multi_poll` and needs a wakeup.
        var sleeping = false
        /// The loop has stopped and its multi handle is gone: commands are dropped.
        var stopped = false
    }

    /// What only the loop's thread touches.
    private struct LoopState {
        var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
        /// No idle timeout can expire before this instant (monotonic nanoseconds).
        var nextTimeoutCheck = UInt64.max
        /// Inside `curl_multi_perform`, where libcurl forbids calls on the multi handle: commands
        /// made from curl's callbacks wait in the inbox for the end of the round.
        var performing = false
        /// A transfer went on the wire since curl last ran: it should run again before sleeping.
        var startedSincePerform = false
        /// Set by `stop`: what the loop keeps alive until its multi handle is cleaned up.
        var stopOwner: (any AnyObject & Sendable)?
        /// The senders of the transfers this round ended, resumed together once the loop holds
        /// none of those transfers any more (`handBack`); kept from round to round for its room.
        var handingBack: [CheckedContinuation<Void, Never>] = []
        /// Raw connections whose handle is in the multi handle, by `CURL *`: curl's "done" for
        /// one of them is the end of its connect, not of a transfer.
        var rawConnections: [UnsafeMutableRawPointer: CurlRawSocket] = [:]
        /// The sockets raw connections wait on, with what they wait for, handed to `curl_multi_poll`.
        var watchedSockets: [curl_waitfd] = []
        /// Who hears that a watched socket is ready.
        var socketWatchers: [curl_socket_t: CurlRawSocket] = [:]
    }

    /// The `CURLM *`; `nil` when libcurl could not make one (then no transfer starts:
    /// `CurlTransport` fails each at once).
    nonisolated(unsafe) private let multi: UnsafeMutableRawPointer?  // guarded by: the loop's thread, but for curl_multi_wakeup
    /// Wakes the loop in place of `curl_multi_wakeup` when there is no multi handle.
    private let wakeWithoutCurl = DispatchSemaphore(value: 0)
    private let shared = CurlLocked(Shared())
    private let state = CurlLoopBound(LoopState(), binding: .ownLoop)

    /// The name of the loop's thread as the system shows it (`/proc/PID/task/*/comm`, `top -H`,
    /// perf): `convey-loop-N`, numbered from 0 in the order the process makes loops.
    let threadName: String

    /// Starts a loop on a new thread of its own.
    init() {
        multi = CurlGlobal.initialized ? curl_multi_init() : nil
        threadName = "convey-loop-\(Self.loopsMade.add(1, ordering: .relaxed).oldValue)"
        // The thread holds the loop until it stops.
        let thread = Thread { [self] in run() }
        thread.name = threadName
        thread.start()
    }

    /// Whether transfers can run: libcurl made a multi handle.
    var drivesTransfers: Bool { multi != nil }

    /// Whether the calling thread is this loop's.
    var isCurrent: Bool { state.isCurrentThread }

    /// Whether the calling thread is an event loop's, any one's.
    static var isOnAnEventLoop: Bool { convey_event_loop_current() != nil }

    /// Stops a debug build when called off every event loop's thread.
    static func assertOnAnEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(isOnAnEventLoop, "state of an event loop touched off its thread", file: file, line: line)
    }

    /// Whether the loop has stopped: its thread ended and its multi handle is gone.
    var hasStopped: Bool { shared.withLock { $0.stopped } }

    // MARK: Transfers, from any thread

    /// Starts `transfer`, which its pool admitted to this loop; its continuation is resumed when
    /// it ends, however it ends.
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

    /// How many transfers of the transport owning `pool` are on the wire now, counted on the loop
    /// thread after every command queued before this call (0 once every send has returned).
    func transfersOnTheWire(of pool: CurlHandlePool) async -> Int {
        await withCheckedContinuation { continuation in
            submit(.countTransfers(pool) { continuation.resume(returning: $0) })
        }
    }

    /// Ends the loop once its transfers are gone, then releases `owner`; for a transport's own loops.
    func stop(owner: any AnyObject & Sendable) {
        submit(.stop(owner: owner))
    }

    /// Carries out `command` at once when called on the loop thread between curl calls (a sink
    /// that makes room from a callback), otherwise queues it for the loop.
    private func submit(_ command: Command) {
        if isCurrent, !state.value.performing {
            handle(command)
            return
        }
        let wake = shared.withLock { shared in
            guard !shared.stopped else { return false }
            shared.inbox.append(command)
            defer { shared.sleeping = false }
            return shared.sleeping
        }
        if wake { wakeUp() }
    }

    /// Outside the lock, so that the woken loop does not wait for it. Safe: the multi handle
    /// lives until the loop stops, and `stop` is the last command a loop is sent.
    private func wakeUp() {
        if let multi {
            curl_multi_wakeup(multi)
        } else {
            wakeWithoutCurl.signal()
        }
    }

    // MARK: The loop thread

    private func run() {
        state.markCurrentThread()
        convey_name_current_thread(threadName)
        var running: Int32 = 0
        // Swapped with the shared inbox, so that both sides keep their storage from one round to the next.
        var commands: [Command] = []
        while true {
            commands.removeAll(keepingCapacity: true)
            shared.withLock { shared in
                swap(&commands, &shared.inbox)
                shared.sleeping = false
            }
            for command in commands { handle(command) }
            commands.removeAll(keepingCapacity: true)
            handBack()

            if let multi {
                state.value.performing = true
                state.value.startedSincePerform = false
                curl_multi_perform(multi, &running)
                state.value.performing = false
                finishCompletedTransfers(multi)
                expireIdleTransfers()
                handBack()
            }

            if state.value.startedSincePerform {
                pollWatchedSockets(timeoutMilliseconds: 0)
                continue
            }
            if state.value.stopOwner != nil, state.value.active.isEmpty, state.value.rawConnections.isEmpty { break }
            let goesToSleep = shared.withLock { shared in
                shared.sleeping = shared.inbox.isEmpty
                return shared.sleeping
            }
            // A busy loop still looks at raw connections' sockets each round, without waiting.
            guard goesToSleep else {
                pollWatchedSockets(timeoutMilliseconds: 0)
                continue
            }
            if multi != nil {
                pollWatchedSockets(timeoutMilliseconds: pollTimeoutMilliseconds())
            } else {
                wakeWithoutCurl.wait()
            }
        }
        shared.withLock { $0.stopped = true }
        if let multi { curl_multi_cleanup(multi) }
        state.value.stopOwner = nil
    }

    private func handle(_ command: Command) {
        switch command {
        case .start(let transfer):
            guard !transfer.cancelRequested else {
                admitNext(after: transfer, multiplexed: false)
                leave(transfer, CurlTransferEnding(failure: CurlTransfer.cancelled(transfer.url)))
                return
            }
            begin(transfer)
        case .cancel(let transfer):
            if isActive(transfer) {
                end(transfer, result: CURLE_OK, loopFailure: CurlTransfer.cancelled(transfer.url))
            } else {
                // Its start is still on the way (or it ended already, and this changes nothing).
                transfer.cancelRequested = true
            }
        case .resume(let transfer):
            let transferState = transfer.easy.transferState.value
            guard isActive(transfer), transferState.isPaused else { return }
            transferState.isPaused = false
            transferState.lastActivity = CurlClock.now
            state.value.nextTimeoutCheck = min(state.value.nextTimeoutCheck, transferState.lastActivity &+ transfer.idleTimeout)
            // May deliver the paused bytes at once, from inside this call.
            state.value.performing = true
            _ = curl_easy_pause(transfer.easy.raw, CURLPAUSE_CONT)
            state.value.performing = false
        case .countTransfers(let pool, let report):
            report(state.value.active.values.count { $0.pool === pool })
        case .stop(let owner):
            state.value.stopOwner = owner
        case .raw(let work):
            work()
        }
    }

    private func isActive(_ transfer: CurlTransfer) -> Bool {
        state.value.active[transfer.easy.raw] === transfer
    }

    /// Puts an admitted transfer on the wire and starts its idle timer.
    private func begin(_ transfer: CurlTransfer) {
        let now = CurlClock.now
        state.value.nextTimeoutCheck = min(state.value.nextTimeoutCheck, now &+ transfer.idleTimeout)
        let added = multi.map { curl_multi_add_handle($0, transfer.easy.raw) }
        guard added == CURLM_OK else {
            let reason = added.map { String(cString: curl_multi_strerror($0)) } ?? "libcurl has no multi handle"
            admitNext(after: transfer, multiplexed: false)
            leave(transfer, CurlTransferEnding(failure: URLError(.unknown, userInfo: [
                NSLocalizedDescriptionKey: "curl could not start the transfer: \(reason)",
                NSURLErrorFailingURLErrorKey: transfer.url,
            ])))
            return
        }
        transfer.easy.transferState.value.begin(transfer, on: self, now: now)
        state.value.active[transfer.easy.raw] = transfer
        state.value.startedSincePerform = true
    }

    /// Frees `transfer`'s place in its origin's queue and starts whoever may run now: here when
    /// the place freed is this loop's, through its own loop's inbox otherwise.
    private func admitNext(after transfer: CurlTransfer, multiplexed: Bool) {
        let pool = transfer.pool
        for next in pool.finished(transfer, on: self, multiplexed: multiplexed) {
            let loop = pool.loops[next.loop]
            if loop === self {
                begin(next.item)
            } else {
                loop.start(next.item)
            }
        }
    }

    private func finishCompletedTransfers(_ multi: UnsafeMutableRawPointer) {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            if let transfer = state.value.active[easy] {
                end(transfer, result: convey_curl_message_result(message))
            } else if let raw = state.value.rawConnections[easy] {
                raw.connectFinished(convey_curl_message_result(message))
            }
        }
    }

    /// Takes a running transfer off the wire, lets the next one to its origin start, and leaves
    /// it for its sender.
    private func end(_ transfer: CurlTransfer, result: CURLcode, loopFailure: URLError? = nil) {
        let multiplexed = loopFailure == nil && result == CURLE_OK
            && transfer.easy.info(CURLINFO_HTTP_VERSION) >= Int(CURL_HTTP_VERSION_2_0)
        if let multi { curl_multi_remove_handle(multi, transfer.easy.raw) }
        state.value.active[transfer.easy.raw] = nil
        let ending = transfer.easy.transferState.value.finish(result: result, loopFailure: loopFailure)
        admitNext(after: transfer, multiplexed: multiplexed)
        leave(transfer, ending)
    }

    /// Leaves `ending` for the transfer's sender, who is resumed by the round's `handBack`.
    private func leave(_ transfer: CurlTransfer, _ ending: CurlTransferEnding) {
        if let continuation = transfer.leave(ending) { state.value.handingBack.append(continuation) }
    }

    /// Resumes the senders of the transfers this round ended, all together. By now the loop holds
    /// no reference to those transfers (their commands, locals and places are gone), so each ends
    /// on its sender's side, sink and body with it, and never on the loop.
    private func handBack() {
        guard !state.value.handingBack.isEmpty else { return }
        var continuations: [CheckedContinuation<Void, Never>] = []
        swap(&continuations, &state.value.handingBack)
        for continuation in continuations { continuation.resume() }
        continuations.removeAll(keepingCapacity: true)
        swap(&continuations, &state.value.handingBack)
    }

    /// Ends transfers that have waited longer than their idle timeout for a byte to move.
    private func expireIdleTransfers() {
        let now = CurlClock.now
        guard now >= state.value.nextTimeoutCheck else { return }
        var nextTimeoutCheck = UInt64.max
        var expired: [CurlTransfer] = []
        for transfer in state.value.active.values {
            let transferState = transfer.easy.transferState.value
            guard !transferState.isPaused else { continue }
            let deadline = transferState.lastActivity &+ transfer.idleTimeout
            if deadline <= now {
                expired.append(transfer)
            } else {
                nextTimeoutCheck = min(nextTimeoutCheck, deadline)
            }
        }
        state.value.nextTimeoutCheck = nextTimeoutCheck
        for transfer in expired {
            end(transfer, result: CURLE_OK, loopFailure: URLError(.timedOut, userInfo: [
                NSLocalizedDescriptionKey: "no data moved for the timeout of \(Double(transfer.idleTimeout) / 1e9) s",
                NSURLErrorFailingURLErrorKey: transfer.url,
            ]))
        }
    }

    /// How long `curl_multi_poll` may sleep: until the next idle timeout could expire (curl
    /// shortens it further for its own timers), at most a minute.
    private func pollTimeoutMilliseconds() -> Int32 {
        let nextTimeoutCheck = state.value.nextTimeoutCheck
        guard nextTimeoutCheck != .max else { return 60_000 }
        let now = CurlClock.now
        guard nextTimeoutCheck > now else { return 0 }
        return Int32(min((nextTimeoutCheck - now) / 1_000_000 + 1, 60_000))
    }
}

extension CurlEventLoop {
    // MARK: Raw connections (CurlRawConnection)

    /// Runs `work` on the loop's thread, between curl calls: at once when called there, else next round.
    func runOnLoop(_ work: @escaping @Sendable () -> Void) {
        submit(.raw(work))
    }

    /// Puts a raw connection's handle in the multi handle, so that curl connects it; on the loop's
    /// thread. Returns why curl refused, or `nil`.
    func addRawConnection(_ socket: CurlRawSocket, easy: UnsafeMutableRawPointer) -> String? {
        guard let multi else { return "libcurl has no multi handle" }
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else { return String(cString: curl_multi_strerror(added)) }
        state.value.rawConnections[easy] = socket
        state.value.startedSincePerform = true
        return nil
    }

    /// Takes a raw connection's handle out of the multi handle, which closes its connection
    /// (libcurl closes a connect-only connection whose handle leaves), and stops watching its socket.
    func removeRawConnection(easy: UnsafeMutableRawPointer, socket: curl_socket_t) {
        watch(socket, events: 0, for: nil)
        guard state.value.rawConnections.removeValue(forKey: easy) != nil, let multi else { return }
        curl_multi_remove_handle(multi, easy)
    }

    /// Waits for `events` (`CURL_WAIT_POLLIN`, `CURL_WAIT_POLLOUT`) on `socket` for `watcher`, which
    /// hears of them through `socketReady`; 0 stops watching. On the loop's thread.
    func watch(_ socket: curl_socket_t, events: Int16, for watcher: CurlRawSocket?) {
        guard socket >= 0 else { return }
        let index = state.value.watchedSockets.firstIndex { $0.fd == socket }
        if events == 0 || watcher == nil {
            if let index { state.value.watchedSockets.remove(at: index) }
            state.value.socketWatchers[socket] = nil
            return
        }
        if let index {
            state.value.watchedSockets[index].events = events
        } else {
            state.value.watchedSockets.append(curl_waitfd(fd: socket, events: events, revents: 0))
        }
        state.value.socketWatchers[socket] = watcher
    }

    /// Sleeps in `curl_multi_poll` (curl's sockets and timers, raw connections' sockets, a
    /// wakeup) for at most `timeoutMilliseconds`, then tells each raw connection whose socket is ready.
    private func pollWatchedSockets(timeoutMilliseconds: Int32) {
        guard let multi else { return }
        var sockets = state.value.watchedSockets
        guard !sockets.isEmpty else {
            if timeoutMilliseconds > 0 { curl_multi_poll(multi, nil, 0, timeoutMilliseconds, nil) }
            return
        }
        curl_multi_poll(multi, &sockets, UInt32(sockets.count), timeoutMilliseconds, nil)
        for socket in sockets where socket.revents != 0 {
            state.value.socketWatchers[socket.fd]?.socketReady(socket.revents)
        }
    }
}

/// `curl_global_init`, once per process, before the first handle.
private enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
}
#endif
