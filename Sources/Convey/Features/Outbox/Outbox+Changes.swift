import Foundation

extension Outbox {
    /// Makes a failed item pending again: tried at once, its attempts and expiry counted afresh,
    /// with the same key. Returns the item. Throws `ConveyError.unknownOutboxItem`,
    /// `ConveyError.outboxFolderInUse` while another process owns the folder, or
    /// `ConveyError.outboxStorageFailed` while the device is locked.
    @discardableResult
    public func retry(_ id: String) async throws -> OutboxItem {
        try await changingItems {
            await reload(tidy: !isDelivering)
            guard var entry = entries[id] else { throw ConveyError.unknownOutboxItem(id) }
            guard entry.state.phase == .failed else { return }
            entry.state.phase = .pending
            entry.state.countedAttempts = 0
            entry.state.pendingSince = configuration.clock.now
            entry.state.notBefore = nil
            entry.state.failure = nil
            entry.state.finishedAt = nil
            entry.keptBody = Data()
            entry.liveError = nil
            entries[id] = entry
            await saveState(id, durable: true)
            pendingOrder.append(id)
            pendingOrder.sort()
            publish(id)
            wake()
        }
        guard let item = item(id: id) else { throw ConveyError.unknownOutboxItem(id) }
        return item
    }

    /// Removes an item, whatever its state: a pending one is never sent (an attempt in flight is
    /// cancelled first, though its request may already have reached the server). Throws
    /// `ConveyError.unknownOutboxItem`, `ConveyError.outboxFolderInUse` while another process owns
    /// the folder, or `ConveyError.outboxStorageFailed` while the device is locked.
    public func drop(_ id: String) async throws {
        try await changingItems {
            if let attempt = inFlight[id] {
                attempt.cancel()
                await attempt.value
            } else {
                await reload(tidy: !isDelivering)
            }
            guard entries[id] != nil else { throw ConveyError.unknownOutboxItem(id) }
            let store = store
            try await Self.onDisk { try store.remove(id: id) }
            entries[id] = nil
            pendingOrder.removeAll { $0 == id }
            finalHooks[id] = nil
            publish(id)
            wake()
        }
    }

    /// Runs `change` owning the folder: with the lock this outbox holds while delivering, or one
    /// taken for the change alone and let go of after it; never waiting for another process. A
    /// change made while the lock is let go of for the app's suspension (`FileLocks`) lets go of
    /// its own lock after it, even while `run()` waits to retake: the process must not hold it
    /// through the suspension.
    private func changingItems(_ change: () async throws -> Void) async throws {
        // Held by delivery, or still by a release waiting for attempts the background keeps: that release lets go of it.
        if ownership != nil { return try await change() }
        let path = store.path
        switch try await Self.onDisk({ try FolderLock.tryAcquire(in: path) }) {
        case .acquired(let lock):
            ownership = lock
        case .heldElsewhere:
            throw ConveyError.outboxFolderInUse("\(FolderLock.holderDescription(in: path)) is delivering from \(path); stop it, or change the item there")
        case .protectedDataUnavailable:
            throw ConveyError.outboxStorageFailed("\(FolderLock.path(in: path)) cannot be opened while the device is locked (its data is protected); change the item once it is unlocked")
        }
        defer { if !isDelivering || lockReleased { ownership = nil } }
        try await change()
    }
}
