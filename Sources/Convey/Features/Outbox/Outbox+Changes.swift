import Foundation

extension Outbox {
    /// Makes a failed item pending again: tried at once, its attempts and expiry counted afresh,
    /// with the same key. Returns the item. Throws `ConveyError.unknownOutboxItem`, or
    /// `ConveyError.outboxFolderInUse` while another process owns the folder.
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
    /// `ConveyError.unknownOutboxItem`, or `ConveyError.outboxFolderInUse` while another process owns the folder.
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
    /// taken for the change alone; never waiting for another process.
    private func changingItems(_ change: () async throws -> Void) async throws {
        if ownership != nil { return try await change() }
        let path = store.path
        guard let lock = try await Self.onDisk({ try FolderLock.tryAcquire(in: path) }) else {
            throw ConveyError.outboxFolderInUse("\(FolderLock.holderDescription(in: path)) is delivering from \(path); stop it, or change the item there")
        }
        ownership = lock
        defer { if !isDelivering { ownership = nil } }
        try await change()
    }
}
