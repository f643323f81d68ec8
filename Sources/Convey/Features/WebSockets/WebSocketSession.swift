import Foundation

/// What stands behind a `WebSocketConnection`: the messages waiting for the app and waiting to go
/// out, the open link (`WebSocketLink`) and the tasks that move its bytes, pings, the close, and
/// reconnection, which puts a new link in place of one that dropped.
///
/// Each link has a reading task and a writing task of its own (and a pinging one with a ping
/// interval); the transport's thread only moves bytes. Both ways are bounded: at most
/// `bufferSize` bytes of messages (plus one message) wait for the app, and the link stops reading
/// the socket until the app takes some; sends wait while `bufferSize` bytes wait to go out.
/// Every wait on time is on the run's clock.
final class WebSocketSession: Sendable, DeadlineWatcher {
    let settings: WebSocketSettings
    /// Runs one handshake through the task's chain and returns the link it opened.
    private let opener: @Sendable (WebSocketDelivery) async throws -> WebSocketLink
    private let state = InlineLocked(State())

    /// What the link's writer sends besides messages: frames the machine made (pongs, the
    /// reply to the server's close, the failing close), pings, and the end of the link.
    private enum Control: Sendable {
        case frame([UInt8])
        case ping([UInt8])
        /// Closes the link once what comes before is written: with this close code first, when
        /// the connection is still open, and its body ending with this failure.
        case closeLink(code: WebSocketCloseCode?, failure: (any Error)?)
    }

    /// What the app queued to go out, in order.
    private enum Outgoing: Sendable {
        case message(WebSocketMessage)
        case close(code: WebSocketCloseCode, reason: String)

        var size: Int {
            if case .message(let message) = self { return message.size }
            return 0
        }
    }

    private enum Phase: Sendable {
        /// A link is open (or ending, while `linkEnding`).
        case open
        /// The link dropped; a new one is being opened.
        case reconnecting
        /// The app asked to close: nothing more is sent, the close handshake is under way.
        case closing
        /// Over: `ending` says how.
        case ended
    }

    /// A ping waiting for its pong.
    private struct PendingPing: Sendable {
        let link: ObjectIdentifier
        let sentAt: ContinuousClock.Instant
        var continuation: CheckedContinuation<Result<Duration, any Error>, Never>?
        var result: Result<Duration, any Error>?
        var timer: Task<Void, Never>?
    }

    private struct State: Sendable {
        var phase = Phase.open
        var link: WebSocketLink?
        /// The link is ending: its writer sends only control frames, messages wait for the next.
        var linkEnding = false
        /// The app asked to close, or stopped the connection: it never reconnects.
        var appClosed = false
        var reconnecting: Task<Void, Never>?

        // Incoming, for the app.
        var inbox: [WebSocketMessage] = []
        var inboxStart = 0
        var inboxBytes = 0
        var consumers: [CheckedContinuation<Void, Never>] = []
        /// The reader, waiting for the app to make room.
        var producer: CheckedContinuation<Void, Never>?
        /// How the messages end once the inbox is drained; reported once.
        var ending: Result<Void, any Error>?
        var endingReported = false

        // Outgoing.
        var outbox: [Outgoing] = []
        var outboxStart = 0
        var outboxBytes = 0
        var control: [Control] = []
        var senders: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextSender = 0
        var writer: CheckedContinuation<Void, Never>?

        var pings: [UInt64: PendingPing] = [:]
        var nextPing: UInt64 = 1
        /// Reconnections since a message last arrived: what the policy's `maxAttempts` bounds.
        var reconnections = 0
        /// Who waits for the reader to wait for the app (the buffer's tests).
        var readerWaitWatchers: [CheckedContinuation<Void, Never>] = []
        var endWaiters: [CheckedContinuation<Void, Never>] = []

        /// What the last link settled, for the app to read.
        var subprotocol: String?
        var extensions: [String] = []
        var head: ResponseHead?
        var peerClose: (code: Int?, reason: String)?
        var deadline: RunDeadline?

        var hasOutgoing: Bool { outboxStart < outbox.count }
        var hasIncoming: Bool { inboxStart < inbox.count }
    }

    init(settings: WebSocketSettings, opener: @escaping @Sendable (WebSocketDelivery) async throws -> WebSocketLink) {
        self.settings = settings
        self.opener = opener
    }

    deinit {
        if let deadline = state.value.deadline { deadline.clock.deadlineAlarm.forget(self) }
    }

    // MARK: Opening

    /// Opens the first link; throws how the handshake's run failed.
    func open() async throws {
        let link = try await opener(WebSocketDelivery(settings: settings))
        guard attach(link) else {
            abandon(link)
            throw ConveyError.cancelled
        }
        if Task.isCancelled {
            stop(ConveyError.cancelled)
            throw ConveyError.cancelled
        }
    }

    /// Makes `link` the open one and starts its tasks; `false` when the session ended meanwhile.
    private func attach(_ link: WebSocketLink) -> Bool {
        let watches: RunDeadline? = state.withLock { state in
            guard state.phase == .open || state.phase == .reconnecting, state.link == nil else { return nil }
            state.phase = .open
            state.link = link
            state.linkEnding = false
            state.subprotocol = link.negotiation.subprotocol
            state.extensions = link.negotiation.extensions
            state.head = link.head
            // The first link's deadline covers the connection's whole life, reconnections included.
            guard state.deadline == nil, let deadline = link.deadline else { return nil }
            state.deadline = deadline
            return deadline
        }
        guard isCurrent(link) else { return false }
        if let watches { watches.clock.deadlineAlarm.watch(self, until: watches.instant, on: watches.clock) }
        Task { await self.read(link) }
        Task { await self.write(link) }
        if let interval = settings.pingInterval {
            link.pinger.set(Task { await self.pingPeriodically(link, every: interval) })
        }
        wakeWriter()
        return true
    }

    /// Closes a link the session has no use for.
    private func abandon(_ link: WebSocketLink) {
        link.body.end(with: ConveyError.cancelled)
        link.wire.close()
        link.source.close()
    }

    private func isCurrent(_ link: WebSocketLink) -> Bool {
        state.withLock { $0.link === link }
    }

    // MARK: The app's side

    /// The next message; `nil` once the connection closed (after the messages before its close),
    /// else throws how it failed, once. Cancelling the waiting task closes the connection with 1001.
    func nextMessage() async throws -> WebSocketMessage? {
        while true {
            enum Step {
                case message(WebSocketMessage, wakes: CheckedContinuation<Void, Never>?)
                case end(Result<Void, any Error>)
                case wait
            }
            let capacity = settings.bufferSize
            let step: Step = state.withLock { state in
                if state.hasIncoming {
                    let message = state.inbox[state.inboxStart]
                    state.inboxStart += 1
                    state.inboxBytes -= message.size
                    if state.inboxStart == state.inbox.count {
                        state.inbox.removeAll(keepingCapacity: true)
                        state.inboxStart = 0
                    } else if state.inboxStart >= 1024 {
                        state.inbox.removeFirst(state.inboxStart)
                        state.inboxStart = 0
                    }
                    var wakes: CheckedContinuation<Void, Never>?
                    if state.inboxBytes <= capacity / 2 {
                        wakes = state.producer
                        state.producer = nil
                    }
                    return .message(message, wakes: wakes)
                }
                if let ending = state.ending {
                    if state.endingReported { return .end(.success(())) }
                    state.endingReported = true
                    return .end(ending)
                }
                return .wait
            }
            switch step {
            case .message(let message, let wakes):
                wakes?.resume()
                return message
            case .end(let ending):
                try ending.get()
                return nil
            case .wait:
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let ready = state.withLock { state in
                            if state.hasIncoming || state.ending != nil { return true }
                            state.consumers.append(continuation)
                            return false
                        }
                        if ready { continuation.resume() }
                    }
                } onCancel: {
                    stop(ConveyError.cancelled)
                }
                if Task.isCancelled { stop(ConveyError.cancelled) }
            }
        }
    }

    /// Queues `message`, waiting while `bufferSize` bytes wait to go out; throws once the
    /// connection is closing or closed.
    func send(_ message: WebSocketMessage) async throws {
        let size = message.size
        let capacity = settings.bufferSize
        while true {
            enum Step {
                case queued
                case refused(Phase)
                case wait(Int)
            }
            let step: Step = state.withLock { state in
                guard state.phase == .open || state.phase == .reconnecting else { return .refused(state.phase) }
                guard state.outboxBytes == 0 || state.outboxBytes + size <= capacity else {
                    state.nextSender += 1
                    return .wait(state.nextSender)
                }
                state.outbox.append(.message(message))
                state.outboxBytes += size
                return .queued
            }
            switch step {
            case .queued:
                wakeWriter()
                return
            case .refused(let phase):
                throw Self.closedError(phase == .ended ? "the connection is closed" : "the connection is closing", url: head?.url)
            case .wait(let id):
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let ready = state.withLock { state in
                            if state.phase != .open && state.phase != .reconnecting || state.outboxBytes + size <= capacity { return true }
                            state.senders[id] = continuation
                            return false
                        }
                        if ready { continuation.resume() }
                    }
                } onCancel: {
                    state.withLock { $0.senders.removeValue(forKey: id) }?.resume()
                }
                if Task.isCancelled { throw ConveyError.cancelled }
            }
        }
    }

    /// Sends a ping and waits for its pong, at most the task's `pongDeadline`; returns the round
    /// trip. A pong that does not come takes the connection for dead: it closes with 1001.
    func ping() async throws -> Duration {
        let clock: any RunClock
        let id: UInt64
        let opened: Result<(any RunClock, UInt64), any Error> = state.withLock { state in
            guard state.phase == .open, let link = state.link, !state.linkEnding else {
                return .failure(state.phase == .reconnecting
                    ? ConveyError.webSocket(.connectionLost, url: state.head?.url, closeCode: WebSocketCloseCode.abnormalClosure.intValue,
                                            reason: "the connection dropped and is reconnecting")
                    : Self.closedError(state.phase == .ended ? "the connection is closed" : "the connection is closing", url: state.head?.url))
            }
            let id = state.nextPing
            state.nextPing += 1
            state.pings[id] = PendingPing(link: ObjectIdentifier(link), sentAt: link.clock.now)
            state.control.append(.ping(Self.payload(id)))
            return .success((link.clock, id))
        }
        (clock, id) = try opened.get()
        wakeWriter()
        let deadline = clock.now + settings.pongDeadline
        let timer = Task { [weak self] in
            guard (try? await clock.sleep(until: deadline)) != nil else { return }
            self?.pongOverdue(id)
        }
        state.withLock { $0.pings[id]?.timer = timer }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Duration, any Error>, Never>) in
                let known: Result<Duration, any Error>? = state.withLock { state in
                    guard var ping = state.pings[id] else { return .failure(ConveyError.cancelled) }
                    if let result = ping.result {
                        state.pings[id] = nil
                        return result
                    }
                    ping.continuation = continuation
                    state.pings[id] = ping
                    return nil
                }
                if let known { continuation.resume(returning: known) }
            }
        } onCancel: {
            let ping = state.withLock { $0.pings.removeValue(forKey: id) }
            ping?.timer?.cancel()
            ping?.continuation?.resume(returning: .failure(ConveyError.cancelled))
        }
        timer.cancel()
        return try result.get()
    }

    /// Closes the connection with `code` and `reason` after the messages queued before, and
    /// waits for the close handshake to end (at most the task's idle timeout for the server's close).
    func close(code: Int, reason: String) async throws {
        let closeCode = WebSocketCloseCode(rawValue: UInt16(clamping: max(0, code)))
        guard code >= 0, code <= Int(UInt16.max), closeCode.isValidOnTheWire else {
            throw ConveyError.webSocket(.invalidArgument, url: state.value.head?.url, closeCode: nil,
                                        reason: "the close code \(code) may not be sent: use 1000–1003, 1007–1014 or 3000–4999")
        }
        guard reason.utf8.count <= 123 else {
            throw ConveyError.webSocket(.invalidArgument, url: state.value.head?.url, closeCode: nil,
                                        reason: "the close reason is \(reason.utf8.count) bytes of UTF-8; a close frame has room for 123")
        }
        enum Action {
            case wait(WebSocketLink?)
            case finish(Task<Void, Never>?)
        }
        let action: Action = state.withLock { state in
            switch state.phase {
            case .ended, .closing:
                return .wait(nil)
            case .reconnecting:
                state.appClosed = true
                return .finish(state.reconnecting)
            case .open:
                state.appClosed = true
                state.phase = .closing
                state.outbox.append(.close(code: closeCode, reason: reason))
                return .wait(state.link)
            }
        }
        switch action {
        case .finish(let reconnecting):
            reconnecting?.cancel()
            finish(nil)
        case .wait(let link):
            link?.armCloseTimer(nil)
            wakeWriter()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state in
                if state.phase == .ended { return true }
                state.endWaiters.append(continuation)
                return false
            }
            if ended { continuation.resume() }
        }
    }

    /// Stops the connection at once: a close 1001 goes out when it is open, the wire closes
    /// without waiting for the server's, and the messages end with `failure` (cancellation, the
    /// total timeout). Never reconnects.
    func stop(_ failure: any Error) {
        enum Action {
            case none
            case closeLink
            case finish(Task<Void, Never>?)
        }
        let action: Action = state.withLock { state in
            guard state.phase != .ended else { return .none }
            state.appClosed = true
            if state.ending == nil {
                // The app is not waiting for what is buffered: the failure is what it hears next.
                state.ending = .failure(failure)
                state.inbox.removeAll()
                state.inboxStart = 0
                state.inboxBytes = 0
            }
            guard state.link != nil else { return .finish(state.reconnecting) }
            state.phase = .closing
            state.linkEnding = true
            state.control.append(.closeLink(code: .goingAway, failure: failure))
            return .closeLink
        }
        switch action {
        case .none: break
        case .closeLink:
            state.value.link?.armCloseTimer(failure)
            wakeWriter()
            wakeEveryone()
        case .finish(let reconnecting):
            reconnecting?.cancel()
            finish(failure)
        }
    }

    /// The total deadline passed: the connection stops with `ConveyError.totalTimedOut`.
    func deadlinePassed(at now: ContinuousClock.Instant) {
        guard let deadline = state.value.deadline, now >= deadline.instant else { return }
        stop(ConveyError.totalTimedOut(limit: deadline.limit, url: state.value.head?.url))
    }

    // MARK: What the app reads

    var subprotocol: String? { state.value.subprotocol }
    var extensions: [String] { state.value.extensions }
    var head: ResponseHead? { state.value.head }
    var peerClose: (code: Int?, reason: String)? { state.value.peerClose }

    // MARK: Reading

    /// Reads the link until it ends: each message to the app, pings answered, the close handshake.
    private func read(_ link: WebSocketLink) async {
        await link.events.opened(subprotocol: link.negotiation.subprotocol, extensions: link.negotiation.extensions)
        var failure: (any Error)?
        while true {
            let chunk: Data?
            do {
                chunk = try await link.source.next()
            } catch {
                failure = Self.linkFailure(error, url: link.url)
                break
            }
            guard let chunk else {
                if let ended = link.endOfInput() { failure = Self.error(for: ended, url: link.url) }
                break
            }
            let receipt = link.receive(chunk)
            if !receipt.bytesToWrite.isEmpty { pushControl(.frame(receipt.bytesToWrite), for: link) }
            for event in receipt.events {
                switch event {
                case .text(let text):
                    await take(.text(text), from: link)
                case .binary(let bytes):
                    await take(.binary(Data(bytes)), from: link)
                case .ping:
                    await link.events.ping(sent: false)
                    await link.events.pong(sent: true, roundTrip: nil)
                case .pong(let payload):
                    let roundTrip = pongArrived(payload, on: link)
                    await link.events.pong(sent: false, roundTrip: roundTrip)
                case .close:
                    break
                }
            }
            if let violation = receipt.failure {
                // The failing close frame is among the bytes to write: the link closes once it went.
                let error = Self.error(for: violation, url: link.url)
                endLink(link, failure: error)
                link.armCloseTimer(error)
            } else if link.isClosed {
                // The close handshake is over: the server closes the connection; read to its end.
                link.armCloseTimer(nil)
            }
        }
        await linkEnded(link, failure: failure)
    }

    /// Hands a message to the app, waiting while `bufferSize` bytes wait for it. Once the app
    /// asked to close, a message that finds the buffer full is dropped, so that the close goes on.
    private func take(_ message: WebSocketMessage, from link: WebSocketLink) async {
        link.counts.withLock { $0.received += 1 }
        await link.events.message(message, sent: false)
        let capacity = settings.bufferSize
        let (consumers, waits) = state.withLock { state -> ([CheckedContinuation<Void, Never>], Bool) in
            state.reconnections = 0
            if state.ending != nil || state.appClosed && state.inboxBytes >= capacity { return ([], false) }
            state.inbox.append(message)
            state.inboxBytes += message.size
            defer { state.consumers.removeAll() }
            return (state.consumers, state.inboxBytes >= capacity && !state.appClosed)
        }
        for consumer in consumers { consumer.resume() }
        guard waits else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (room, watchers) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                if state.inboxBytes <= capacity / 2 || state.ending != nil || state.appClosed || state.link !== link { return (true, []) }
                state.producer = continuation
                defer { state.readerWaitWatchers.removeAll() }
                return (false, state.readerWaitWatchers)
            }
            for watcher in watchers { watcher.resume() }
            if room { continuation.resume() }
        }
    }

    /// Returns once the reader waits for the app to take messages (at once if it does): what the
    /// tests of the incoming buffer's bound wait for.
    func readerWaitsForApp() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waits = state.withLock { state in
                if state.producer != nil || state.phase == .ended { return true }
                state.readerWaitWatchers.append(continuation)
                return false
            }
            if waits { continuation.resume() }
        }
    }

    /// The bytes of messages waiting for the app, and how many messages the open link read.
    var incoming: (bufferedBytes: Int, received: Int) {
        state.withLock { ($0.inboxBytes, $0.link?.counts.value.received ?? 0) }
    }

    /// Whether the reader waits for the app to take messages: then pings are not due, since the
    /// pong waits behind the messages the socket holds.
    private var readerWaits: Bool { state.value.producer != nil }

    // MARK: Writing

    /// What the writer takes at once: every control item, then messages up to 1 MiB.
    private struct Batch {
        var control: [Control] = []
        var outgoing: [Outgoing] = []
        var messageBytes = 0
    }

    /// Writes the link's control frames and the app's messages, in order, until the link ends.
    private func write(_ link: WebSocketLink) async {
        while let batch = await nextBatch(for: link) {
            var bytes: [UInt8] = []
            var messages: [WebSocketMessage] = []
            var pings = 0
            var closing: (code: WebSocketCloseCode?, failure: (any Error)?)?
            var compressionFailure: (any Error)?
            for item in batch.control {
                switch item {
                case .frame(let frame): bytes += frame
                case .ping(let payload):
                    if let frame = link.pingFrame(payload) {
                        bytes += frame
                        pings += 1
                    }
                case .closeLink(let code, let failure):
                    if let code, let frame = link.closeFrame(code: code, reason: "") { bytes += frame }
                    closing = (code, failure)
                }
            }
            for item in batch.outgoing {
                switch item {
                case .message(let message):
                    do {
                        bytes += try link.frame(message)
                        messages.append(message)
                    } catch .compressionFailed(let reason) {
                        compressionFailure = ConveyError.webSocket(.protocolError, url: link.url, closeCode: Int(WebSocketCloseCode.internalServerError.rawValue),
                                                                   reason: "the message could not be compressed: \(reason)")
                    } catch {
                        // The connection closed under the message: it is dropped, as after any close.
                    }
                case .close(let code, let reason):
                    if let frame = link.closeFrame(code: code, reason: reason) { bytes += frame }
                }
            }
            // Told before the bytes go, so that no answer to them is told first.
            link.counts.withLock { $0.sent += messages.count }
            for message in messages { await link.events.message(message, sent: true) }
            for _ in 0..<pings { await link.events.ping(sent: true) }
            var written = true
            if !bytes.isEmpty {
                do {
                    try await link.wire.write(bytes)
                } catch {
                    written = false
                }
            }
            wrote(batch.messageBytes)
            if let compressionFailure { endLink(link, failure: compressionFailure, code: .internalServerError) }
            if let closing {
                link.body.end(with: closing.failure)
                link.wire.close()
                break
            }
            // The wire broke: the reader learns so from its read, and ends the link.
            if !written { break }
        }
    }

    /// The next batch for `link`'s writer; `nil` once the link is no longer the open one.
    private func nextBatch(for link: WebSocketLink) async -> Batch? {
        while true {
            enum Step {
                case batch(Batch)
                case ended
                case wait
            }
            let step: Step = state.withLock { state in
                guard state.link === link else { return .ended }
                let sendsMessages = !state.linkEnding
                guard !state.control.isEmpty || sendsMessages && state.hasOutgoing else { return .wait }
                var batch = Batch()
                batch.control = state.control
                state.control.removeAll()
                while sendsMessages, state.hasOutgoing, batch.messageBytes < 1 << 20, batch.outgoing.count < 256 {
                    let item = state.outbox[state.outboxStart]
                    state.outboxStart += 1
                    batch.outgoing.append(item)
                    batch.messageBytes += item.size
                }
                if state.outboxStart == state.outbox.count {
                    state.outbox.removeAll(keepingCapacity: true)
                    state.outboxStart = 0
                }
                return .batch(batch)
            }
            switch step {
            case .batch(let batch): return batch
            case .ended: return nil
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state in
                        if state.link !== link || !state.control.isEmpty || !state.linkEnding && state.hasOutgoing { return true }
                        state.writer = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
        }
    }

    /// `bytes` of messages went out: senders waiting for room may go on.
    private func wrote(_ bytes: Int) {
        guard bytes > 0 else { return }
        let senders = state.withLock { state in
            state.outboxBytes -= bytes
            defer { state.senders.removeAll() }
            return Array(state.senders.values)
        }
        for sender in senders { sender.resume() }
    }

    private func wakeWriter() {
        state.withLock { state in
            defer { state.writer = nil }
            return state.writer
        }?.resume()
    }

    private func pushControl(_ item: Control, for link: WebSocketLink) {
        let current = state.withLock { state in
            guard state.link === link else { return false }
            state.control.append(item)
            return true
        }
        if current { wakeWriter() }
    }

    /// Ends `link` with `failure`: a close frame with `code` (the failure's; none when the
    /// machine sent its own) goes out after what is queued, then the wire closes.
    private func endLink(_ link: WebSocketLink, failure: any Error, code: WebSocketCloseCode? = nil) {
        let ends = state.withLock { state in
            guard state.link === link, !state.linkEnding else { return false }
            state.linkEnding = true
            state.control.append(.closeLink(code: code, failure: failure))
            return true
        }
        guard ends else { return }
        link.armCloseTimer(failure)
        wakeWriter()
    }

    // MARK: Pings

    /// A ping's payload: its number, 8 bytes big-endian.
    private static func payload(_ id: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: id >> (56 - 8 * UInt64($0))) }
    }

    /// A pong came: it answers the ping it names and every earlier one on the link. Returns the
    /// round trip of the ping it names, when the client sent one.
    private func pongArrived(_ payload: [UInt8], on link: WebSocketLink) -> Duration? {
        guard payload.count == 8 else { return nil }
        let id = payload.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let now = link.clock.now
        let linkID = ObjectIdentifier(link)
        var roundTrip: Duration?
        let answered: [(CheckedContinuation<Result<Duration, any Error>, Never>, Duration, Task<Void, Never>?)] = state.withLock { state in
            var answered: [(CheckedContinuation<Result<Duration, any Error>, Never>, Duration, Task<Void, Never>?)] = []
            for (key, var ping) in state.pings where key <= id && ping.link == linkID && ping.result == nil {
                let elapsed = ping.sentAt.duration(to: now)
                if key == id { roundTrip = elapsed }
                if let continuation = ping.continuation {
                    state.pings[key] = nil
                    answered.append((continuation, elapsed, ping.timer))
                } else {
                    ping.result = .success(elapsed)
                    state.pings[key] = ping
                }
            }
            return answered
        }
        for (continuation, elapsed, timer) in answered {
            timer?.cancel()
            continuation.resume(returning: .success(elapsed))
        }
        return roundTrip
    }

    /// A ping's deadline passed without its pong: the connection is taken for dead.
    private func pongOverdue(_ id: UInt64) {
        let (link, continuation, url): (WebSocketLink?, CheckedContinuation<Result<Duration, any Error>, Never>?, URL?) = state.withLock { state in
            guard var ping = state.pings[id], ping.result == nil else { return (nil, nil, nil) }
            let link = state.link.flatMap { ObjectIdentifier($0) == ping.link ? $0 : nil }
            let error = Self.pongError(url: state.head?.url, deadline: settings.pongDeadline)
            if let continuation = ping.continuation {
                state.pings[id] = nil
                return (link, continuation, state.head?.url)
            }
            ping.result = .failure(error)
            state.pings[id] = ping
            return (link, nil, state.head?.url)
        }
        let error = Self.pongError(url: url, deadline: settings.pongDeadline)
        continuation?.resume(returning: .failure(error))
        if let link { endLink(link, failure: error, code: .goingAway) }
    }

    private static func pongError(url: URL?, deadline: Duration) -> ConveyError {
        .webSocket(.pongTimeout, url: url, closeCode: WebSocketCloseCode.goingAway.intValue,
                   reason: "no pong came within \(DisplayFormat.duration(deadline)) of a ping")
    }

    /// Pings the link every `interval` while it is open, unless the reader waits for the app.
    private func pingPeriodically(_ link: WebSocketLink, every interval: Duration) async {
        let clock = link.clock
        var next = clock.now + interval
        while true {
            do {
                try await clock.sleep(until: next)
            } catch {
                return
            }
            next = clock.now + interval
            guard isCurrent(link), !state.value.linkEnding else { return }
            if readerWaits { continue }
            do {
                _ = try await ping()
            } catch {
                return
            }
        }
    }

    // MARK: Ending and reconnecting

    /// The link ended: its close is told, then the session reconnects, or ends.
    private func linkEnded(_ link: WebSocketLink, failure: (any Error)?) async {
        link.ended()
        let summary = link.closeSummary
        let counts = link.counts.value
        await link.events.closed(code: summary.code, reason: summary.reason, byClient: summary.byClient, sent: counts.sent,
                                 received: counts.received, error: failure)
        enum Next {
            case none
            case reconnect(RetryPolicy)
            case finish
        }
        let (next, pings): (Next, [PendingPing]) = state.withLock { state in
            guard state.link === link else { return (.none, []) }
            state.link = nil
            state.linkEnding = false
            state.control.removeAll()
            if let received = summary.received { state.peerClose = (received.code.map { Int($0.rawValue) } ?? Int(WebSocketCloseCode.noStatusReceived.rawValue), received.reason) }
            let linkID = ObjectIdentifier(link)
            let pings = state.pings.values.filter { $0.link == linkID }
            state.pings = state.pings.filter { $0.value.link != linkID }
            guard state.phase != .ended else { return (.none, pings) }
            if !state.appClosed, let policy = settings.reconnection, Self.reconnects(after: failure, serverClose: summary.byClient ? nil : summary.code) {
                state.phase = .reconnecting
                return (.reconnect(policy), pings)
            }
            return (.finish, pings)
        }
        let closedError = Self.closedError("the connection closed", url: link.url)
        for ping in pings {
            ping.timer?.cancel()
            ping.continuation?.resume(returning: .failure(failure ?? closedError))
        }
        wakeWriter()
        switch next {
        case .none: break
        case .finish: finish(failure)
        case .reconnect(let policy):
            let error = failure ?? ConveyError.webSocket(.connectionLost, url: link.url, closeCode: summary.code,
                                                         reason: "the server closed the connection with \(summary.code.map(String.init) ?? "no code")")
            let task = Task { await self.reconnect(after: error, policy: policy, clock: link.clock) }
            let stopped = state.withLock { state in
                guard state.phase == .reconnecting else { return true }
                state.reconnecting = task
                return false
            }
            if stopped { task.cancel() }
        }
    }

    /// Whether a link that ended so is worth reconnecting: a dropped connection, a pong that did
    /// not come, or the server closing with 1001 (going away) or 1011–1014 (an error or a restart
    /// on its side). Never after a close the app asked for, the total timeout, a cancellation, a
    /// protocol error or a message too big (which would only happen again), a normal closure or
    /// an application's own code (3000–4999, whose meaning only the app knows).
    private static func reconnects(after failure: (any Error)?, serverClose: Int?) -> Bool {
        if let failure {
            guard case ConveyError.webSocket(let kind, _, _, _)? = failure as? ConveyError else { return false }
            return kind == .connectionLost || kind == .pongTimeout
        }
        guard let serverClose else { return false }
        return serverClose == 1001 || (1011...1014).contains(serverClose)
    }

    /// Opens new links after a drop, waiting between attempts as `policy` says (its backoff and
    /// jitter, on the run's clock), up to its `maxAttempts` - 1 attempts in a row (a link that
    /// opens but drops before a message arrives counts in the row); gives up on a handshake
    /// failure the policy does not take as transient.
    private func reconnect(after drop: any Error, policy: RetryPolicy, clock: any RunClock) async {
        var last = drop
        while true {
            let count = state.withLock { state in
                state.reconnections += 1
                return state.reconnections
            }
            // A dropped connection is a lost one, whatever ended it: transient, worth the backoff.
            let asked = Self.isDrop(last) ? ConveyError.transport(.connectionLost, url: state.value.head?.url,
                                                                  code: URLError.Code.networkConnectionLost.rawValue, reason: "dropped")
                : last
            guard let wait = policy.retryInterval(afterError: asked, count: count, method: .get) else {
                finish(last)
                return
            }
            do {
                try await clock.sleep(until: clock.now + .seconds(wait))
            } catch {
                return
            }
            if Task.isCancelled { return }
            do {
                let link = try await opener(WebSocketDelivery(settings: settings))
                if !attach(link) { abandon(link) }
                return
            } catch {
                if Task.isCancelled { return }
                last = error
            }
        }
    }

    private static func isDrop(_ error: any Error) -> Bool {
        guard case ConveyError.webSocket(let kind, _, _, _)? = error as? ConveyError else { return false }
        return kind == .connectionLost || kind == .pongTimeout
    }

    /// The session is over: the messages end (after those buffered) with `failure`, or normally;
    /// every wait ends.
    private func finish(_ failure: (any Error)?) {
        let deadline: RunDeadline? = state.withLock { state in
            state.phase = .ended
            if state.ending == nil { state.ending = failure.map { .failure($0) } ?? .success(()) }
            return state.deadline
        }
        if let deadline { deadline.clock.deadlineAlarm.forget(self) }
        wakeEveryone()
    }

    /// Wakes whoever waits on the session, to look again at where it stands.
    private func wakeEveryone() {
        let (consumers, producer, senders, enders, pings) = state.withLock { state in
            defer {
                state.consumers.removeAll()
                state.producer = nil
                state.senders.removeAll()
                if state.phase == .ended {
                    state.endWaiters.removeAll()
                    state.pings.removeAll()
                    state.readerWaitWatchers.removeAll()
                }
            }
            return (state.consumers, state.producer, Array(state.senders.values),
                    state.phase == .ended ? state.endWaiters + state.readerWaitWatchers : [],
                    state.phase == .ended ? Array(state.pings.values) : [])
        }
        for consumer in consumers { consumer.resume() }
        producer?.resume()
        for sender in senders { sender.resume() }
        for ender in enders { ender.resume() }
        for ping in pings {
            ping.timer?.cancel()
            ping.continuation?.resume(returning: .failure(Self.closedError("the connection closed", url: nil)))
        }
        wakeWriter()
    }

    // MARK: Errors

    /// The typed error of a protocol violation, with the code the client closed with.
    private static func error(for violation: WebSocketProtocolError, url: URL?) -> ConveyError {
        let kind: WebSocketFailure = switch violation {
        case .messageTooBig: .messageTooBig
        case .connectionEnded: .connectionLost
        default: .protocolError
        }
        return .webSocket(kind, url: url, closeCode: violation.closeCode.intValue, reason: violation.description)
    }

    /// How a read that threw ended the link: what the connection chose (its body throws that), or
    /// a transport's failure, which is the connection lost.
    private static func linkFailure(_ error: any Error, url: URL?) -> any Error {
        guard let convey = error as? ConveyError else { return error }
        switch convey {
        case .transport, .attemptTimedOut:
            return ConveyError.webSocket(.connectionLost, url: url, closeCode: WebSocketCloseCode.abnormalClosure.intValue, reason: convey.logDetail)
        default:
            return error
        }
    }

    private static func closedError(_ reason: String, url: URL?) -> ConveyError {
        .webSocket(.closed, url: url, closeCode: nil, reason: reason)
    }
}

extension WebSocketCloseCode {
    /// The code as the app's API takes it.
    var intValue: Int { Int(rawValue) }
}
