import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Outbox {
    /// Delivers pending items until none is left pending: each is delivered or failed, retries
    /// waited out. Items enqueued meanwhile (by this outbox, or by other processes, read when
    /// the queue runs dry) are delivered too. With `once`, tries each item pending at the start
    /// once, now, whatever its retry time, and returns: the others stay pending.
    ///
    /// Owns the folder meanwhile: waits while another process does, and while the device is
    /// locked (with `once`, returns instead, leaving the items pending). Cancelling the calling
    /// task stops the attempts in flight (their items stay pending) and throws `CancellationError`.
    ///
    /// Throws `ConveyError.outboxFolderInUse` when the folder's lock is let go of for the app's
    /// suspension (``FileLocks``), at the start or meanwhile, before it is done: in the background
    /// (a background refresh, a push, a background task) call
    /// ``FileLocks/retakeAfterSuspension()`` first and ``FileLocks/releaseForSuspension()`` after.
    public func deliverPending(once: Bool = false) async throws {
        try await deliver(once ? .once : .drain)
    }

    /// Delivers items as they come, including those enqueued later, until the calling task is
    /// cancelled (then throws `CancellationError`). Owns the folder meanwhile: waits while
    /// another process does, while the device is locked, and while the folder's lock is let go of
    /// for the app's suspension (``FileLocks``). Call it when the app starts; items left by an
    /// earlier run resume.
    public func run() async throws {
        try await deliver(.forever)
    }

    enum DeliveryMode { case drain, once, forever }

    /// How often an idle `run()` reads the folder for items other processes enqueued.
    static let idleRescanInterval: TimeInterval = 5

    /// Why `deliverPending` does not deliver while the folder's lock is let go of.
    static var releasedForSuspension: ConveyError {
        .outboxFolderInUse("its lock is let go of while the app is suspended (FileLocks.releaseForSuspension()); "
            + "to deliver in the background, call FileLocks.retakeAfterSuspension() first and FileLocks.releaseForSuspension() after")
    }

    private func deliver(_ mode: DeliveryMode) async throws {
        guard !isDelivering else { throw ConveyError.outboxFolderInUse("this outbox is already delivering") }
        if mode != .forever, lockReleased { throw Self.releasedForSuspension }
        isDelivering = true
        defer {
            isDelivering = false
            ownership = nil
        }
        try await takeOwnershipWaiting()
        // Without the lock (let go of for the app's suspension, or a locked device), the folder is read but not tidied.
        await reload(tidy: ownership != nil)
        let onceIDs = Set(pendingOrder)
        var tried: Set<String> = []
        stoppedAttempts = []
        var rescannedWhileEmpty = false
        try await withTaskCancellationHandler {
            while true {
                if Task.isCancelled {
                    await stopAttempts()
                    throw CancellationError()
                }
                if lockReleased {
                    // Let go of for the app's suspension: the attempts the background keeps end
                    // first; then `run()` waits to be told to take the lock again, and the others
                    // return done, or say why not.
                    if !inFlight.isEmpty || mode == .forever {
                        await waitForWork(until: nil)
                        continue
                    }
                    if mode == .once, stoppedAttempts.isDisjoint(with: onceIDs),
                       pendingOrder.allSatisfy({ !onceIDs.contains($0) || tried.contains($0) }) { return }
                    if mode == .drain, pendingOrder.isEmpty { return }
                    throw Self.releasedForSuspension
                }
                if ownership == nil {
                    try await takeOwnershipWaiting()
                    if ownership != nil {
                        await reload(tidy: true)
                    } else if lockFileUnavailable {
                        // The lock file cannot be opened on a locked device: `once` leaves the items pending.
                        if mode == .once { return }
                        await waitForProtectedData()
                    }
                    continue
                }
                if protectedDataUnavailable, inFlight.isEmpty {
                    // Paused until the items can be read: `once` leaves them pending.
                    if mode == .once { return }
                    await waitForProtectedData()
                    continue
                }
                let now = configuration.clock.now
                var earliest: Date?
                var startable = false
                for id in pendingOrder where mode != .once || (onceIDs.contains(id) && !tried.contains(id)) {
                    if inFlight.count >= configuration.concurrency { break }
                    if inFlight[id] != nil {
                        if configuration.concurrency == 1 { break }
                        continue
                    }
                    guard let entry = entries[id] else { continue }
                    if let failure = expiryFailure(entry, at: now) {
                        await finishFailed(id, error: failure, task: nil)
                        continue
                    }
                    if mode != .once, let notBefore = entry.state.notBefore, notBefore > now {
                        earliest = min(earliest ?? notBefore, notBefore)
                        // In order: a later item never overtakes one waiting to retry.
                        if configuration.concurrency == 1 { break }
                        continue
                    }
                    startable = true
                    tried.insert(id)
                    start(id)
                    if configuration.concurrency == 1 { break }
                }
                if inFlight.isEmpty, !startable {
                    switch mode {
                    case .once:
                        if pendingOrder.allSatisfy({ !onceIDs.contains($0) || tried.contains($0) }) { return }
                    case .drain:
                        if pendingOrder.isEmpty {
                            if rescannedWhileEmpty { return }
                            rescannedWhileEmpty = true
                            await reload(tidy: false, newOnly: true)
                            continue
                        }
                    case .forever:
                        if earliest == nil {
                            await waitForWork(until: now.addingTimeInterval(Self.idleRescanInterval))
                            if !Task.isCancelled, inFlight.isEmpty { await reload(tidy: false, newOnly: true) }
                            continue
                        }
                    }
                }
                rescannedWhileEmpty = false
                await waitForWork(until: earliest)
            }
        } onCancel: {
            Task { @ConveyActor [weak self] in self?.wake() }
        }
    }

    /// How often delivery paused for protected data looks again, besides when the system says
    /// the data became available (iOS).
    static let protectedDataRetryInterval: TimeInterval = 10

    /// Waits until the items' protected data may be available again, then reads the folder: the
    /// system's notice (iOS, visionOS) or `protectedDataRetryInterval` passing, whichever
    /// comes first, or a stop.
    private func waitForProtectedData() async {
        let observation = ProtectedData.whenAvailable { Task { @ConveyActor [weak self] in self?.wake() } }
        await waitForWork(until: configuration.clock.now.addingTimeInterval(Self.protectedDataRetryInterval))
        withExtendedLifetime(observation) {}
        guard !Task.isCancelled else { return }
        await reload(tidy: ownership != nil)
    }

    /// Takes the folder's lock, waiting (and checking for cancellation) while another holder has
    /// it; gives up, without it, when the lock is let go of for the app's suspension meanwhile, or
    /// when the lock file's data is protected and unavailable (a locked device:
    /// `lockFileUnavailable` says so).
    func takeOwnershipWaiting() async throws {
        let path = store.path
        lockFileUnavailable = false
        while ownership == nil, !lockReleased {
            switch try await Self.onDisk({ try FolderLock.tryAcquire(in: path) }) {
            case .acquired(let lock):
                ownership = lock
                return
            case .protectedDataUnavailable:
                lockFileUnavailable = true
                return
            case .heldElsewhere:
                // The holder's exit is an event no clock can predict: look again shortly.
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Lets go of the folder's lock for the app's suspension, so that another process may take
    /// it; delivery starts no attempt until `retakeFolderLock()`. The attempts in flight are
    /// stopped (their items stay pending, their attempt counted, sent again later with the same
    /// key), except those the background keeps: on a server that `finishesRunsInBackground`,
    /// while the system grants the time (its background-task assertion is held), they finish
    /// first, and are stopped only if the system takes the time back.
    func releaseFolderLock() async {
        lockReleased = true
        wake()
        // The assertion this server's runs hold, the attempts among them.
        let assertion = server.storedConfiguration.backgroundRunAssertion
        if !inFlight.isEmpty, server.storedConfiguration.finishesRunsInBackground {
            let expiry = assertion.whenExpired { Task { @ConveyActor [weak self] in self?.cancelAttempts() } }
            if assertion.isHeld {
                while let attempt = inFlight.values.first { await attempt.value }
            }
            withExtendedLifetime(expiry) {}
        }
        // Taken again meanwhile (a direct call; the registry orders its own): delivery goes on.
        guard lockReleased else { return }
        await stopAttempts()
        ownership = nil
        wake()
    }

    /// Lets delivery take the folder's lock again, waiting for it while another process holds it.
    func retakeFolderLock() {
        lockReleased = false
        wake()
    }

    /// Starts an attempt of the item in a task of its own.
    private func start(_ id: String) {
        inFlight[id] = Task { @ConveyActor in
            await self.attempt(id)
            self.inFlight[id] = nil
            self.wake()
        }
    }

    /// Cancels the attempts in flight and waits for them: their items stay pending.
    private func stopAttempts() async {
        let attempts = inFlight
        cancelAttempts()
        for attempt in attempts.values { await attempt.value }
    }

    /// Cancels the attempts in flight, without waiting for them.
    private func cancelAttempts() {
        for attempt in inFlight.values { attempt.cancel() }
    }

    /// Wakes the delivery loop: an item was enqueued or retried, an attempt ended, or a stop came.
    func wake() {
        if let wakeup {
            self.wakeup = nil
            wakeup.resume()
        } else {
            wakeRequested = true
        }
    }

    /// Returns when `wake()` is called, or at `deadline`.
    private func waitForWork(until deadline: Date?) async {
        if wakeRequested {
            wakeRequested = false
            return
        }
        let clock = configuration.clock
        let timer = deadline.map { deadline in
            Task { @ConveyActor [weak self] in
                try? await clock.sleep(until: deadline)
                if !Task.isCancelled { self?.wake() }
            }
        }
        await withCheckedContinuation { wakeup = $0 }
        wakeRequested = false
        timer?.cancel()
    }

    // MARK: - One attempt

    /// One attempt of one item, through the pipeline, and what follows from it.
    private func attempt(_ id: String) async {
        guard var entry = entries[id], entry.state.phase == .pending else { return }
        let store = store
        entry.state.attempts += 1
        entry.state.lastAttemptAt = configuration.clock.now
        entry.state.notBefore = nil
        // Read and checked, and the attempt counted on disk, in one trip off the actor.
        let counted = entry.state
        let loaded: (request: StoredRequest, body: Data)
        let stateFailure: String?
        do {
            (loaded, stateFailure) = try await Self.onDisk {
                let loaded = try store.readItem(id: id)
                do {
                    try store.writeState(id: id, state: counted, bytes: Data(), durable: false)
                    return (loaded, nil)
                } catch {
                    return (loaded, "its state could not be saved: \(error)")
                }
            }
        } catch let damage as OutboxDamage where damage.isUnavailable {
            // Not now, not damaged: the item stays pending, its attempt not counted.
            protectedDataUnavailable = true
            return
        } catch {
            await setAside(id, reason: (error as? OutboxDamage)?.reason ?? "\(error)")
            return
        }
        if let stateFailure { entry.state.lastError = stateFailure }
        entries[id] = entry
        publish(id)
        OutboxCrashPoint.attemptStarted.reach()

        let task = OutboxDeliveryTask(server: server, itemID: id, stored: loaded.request, body: loaded.body, itemAttempt: entry.state.attempts,
                                      maximumResponseSize: configuration.maximumResponseSize, idempotencyKeyField: configuration.idempotencyKeyField)
        do {
            let response = try await task.deliver()
            OutboxCrashPoint.responseReceived.reach()
            offlineStreak = 0
            await finishDelivered(id, response: response, task: task)
        } catch {
            if error.isCancellation, Task.isCancelled {
                // Stopped from outside: the item stays pending, its attempt counted.
                stoppedAttempts.insert(id)
                return
            }
            await attemptFailed(id, error: error, task: task)
        }
    }

    /// Decides what a failed attempt leads to: another attempt later, or the item's failure.
    private func attemptFailed(_ id: String, error: any Error, task: OutboxDeliveryTask) async {
        guard var entry = entries[id] else { return }
        let now = configuration.clock.now
        let lastError = Redaction.standard.maskedText(EchoFormatter.summary(of: error))
        entry.state.lastError = lastError
        let policy = configuration.retryPolicy
        let wait: TimeInterval
        if case ConveyError.transport(.cannotConnect, _, _, _) = error {
            // Offline: back off without spending the item's attempts.
            offlineStreak += 1
            let delay = min(policy.maxDelay.timeInterval, policy.baseDelay.timeInterval * pow(2, Double(min(offlineStreak - 1, 30))))
            wait = delay - delay * policy.jitter * Double.random(in: 0...1)
        } else {
            offlineStreak = 0
            entry.state.countedAttempts += 1
            let error = Self.asLostAnswer(error)
            guard let interval = policy.retryInterval(afterError: error, count: entry.state.countedAttempts,
                                                      method: HTTPMethod(rawValue: entry.request.method), now: now) else {
                entries[id] = entry
                let exhausted = policy.isTransient(error) && entry.state.countedAttempts >= policy.maxAttempts
                await finishFailed(id, error: exhausted ? ConveyError.attemptsExhausted(attempts: entry.state.attempts, lastError: lastError) : error,
                                   task: task)
                return
            }
            wait = interval
        }
        let next = now.addingTimeInterval(max(0, wait))
        if let expiry = configuration.expiry, next >= entry.state.pendingSince.addingTimeInterval(expiry.timeInterval) {
            entries[id] = entry
            await finishFailed(id, error: ConveyError.expired(lastError: lastError), task: task)
            return
        }
        entry.state.notBefore = next
        entries[id] = entry
        await saveState(id, durable: false)
        publish(id)
    }

    /// FoundationNetworking reports a connection closed before any answer as a bad server
    /// response (-1011, "Empty reply from server") where libcurl reports a lost connection: for
    /// the retry decision it is what it is, an answer lost after the request went out.
    static func asLostAnswer(_ error: any Error) -> any Error {
        guard case ConveyError.transport(.malformedResponse, let url, let code, let reason) = error,
              code == URLError.Code.badServerResponse.rawValue else { return error }
        return ConveyError.transport(.connectionLost, url: url, code: code, reason: reason)
    }

    /// The expiry failure of an item whose expiry has passed, or `nil`.
    private func expiryFailure(_ entry: Entry, at now: Date) -> ConveyError? {
        guard let expiry = configuration.expiry, now >= entry.state.pendingSince.addingTimeInterval(expiry.timeInterval) else { return nil }
        return .expired(lastError: entry.state.lastError)
    }

    // MARK: - Final states

    private func finishDelivered(_ id: String, response: ServerResponse<Data>, task: OutboxDeliveryTask) async {
        guard var entry = entries[id] else { return }
        entry.state.phase = .delivered
        entry.state.statusCode = response.statusCode
        entry.state.finishedAt = configuration.clock.now
        entry.state.notBefore = nil
        entry.state.lastError = nil
        entry.keptBody = OutboxCredentials.masking(task.sentSecrets.all, in: response.data)
        entries[id] = entry
        pendingOrder.removeAll { $0 == id }
        await saveState(id, durable: true)
        publish(id)
        await server.didFinish(task: task, response: response, error: nil)
        await finalHooks.removeValue(forKey: id)?.delivered(response)
    }

    func finishFailed(_ id: String, error: any Error, task: OutboxDeliveryTask?) async {
        guard var entry = entries[id] else { return }
        entry.state.phase = .failed
        entry.state.failure = StoredFailure(error)
        entry.state.finishedAt = configuration.clock.now
        entry.state.notBefore = nil
        entry.state.lastError = Redaction.standard.maskedText(EchoFormatter.summary(of: error))
        entry.keptBody = (error as? HTTPError).map { OutboxCredentials.masking(task?.sentSecrets.all ?? [], in: $0.body) } ?? Data()
        entry.liveError = error
        entries[id] = entry
        pendingOrder.removeAll { $0 == id }
        await saveState(id, durable: true)
        publish(id)
        let reported = task ?? OutboxDeliveryTask(server: server, itemID: id, stored: entry.request, body: Data(), itemAttempt: entry.state.attempts,
                                                  maximumResponseSize: configuration.maximumResponseSize,
                                                  idempotencyKeyField: configuration.idempotencyKeyField)
        await server.didFinish(task: reported, response: nil, error: error)
        await finalHooks.removeValue(forKey: id)?.failed(error)
    }

    /// Writes the item's state; a failure to write is noted on the item, never fatal: what is not
    /// on disk is at worst sent again after a restart, with the same key.
    func saveState(_ id: String, durable: Bool) async {
        guard let entry = entries[id] else { return }
        let store = store
        do {
            try await Self.onDisk { try store.writeState(id: id, state: entry.state, bytes: entry.keptBody, durable: durable) }
        } catch {
            entries[id]?.state.lastError = "its state could not be saved: \(error)"
        }
    }

    /// Moves a damaged item out of the way, so that it never blocks the others.
    private func setAside(_ id: String, reason: String) async {
        let store = store
        await Self.onDisk { store.setAside(id: id, reason: reason) }
        entries[id] = nil
        pendingOrder.removeAll { $0 == id }
        finalHooks[id] = nil
        damaged = await Self.onDisk { store.setAsideFiles() }
        publish(id)
    }
}

extension Outbox: ReleasableFileLock {
    func releaseForSuspension() async {
        await releaseFolderLock()
    }

    func retakeAfterSuspension() async {
        retakeFolderLock()
    }
}
