import Foundation

extension Outbox {
    /// Stores the task's request as a new pending item and returns it once it is on disk (the
    /// file and the folder synced): from then on no crash, `kill -9` or power loss loses it.
    ///
    /// The request is built as a run builds it (the task's server, remote, path, query, headers
    /// and body) and stored without credentials: the server's `headers(for:)` supplies them at
    /// every attempt. The item gets a new `Idempotency-Key`, unless the task's headers carry one
    /// of their own, which is kept. The task's `willSendRequest` and per-attempt hooks are not
    /// stored (code cannot be); its `didFinish(with:)`, `didSucceed(with:)` or `didFail(with:)`
    /// run once for the item's outcome, while this outbox lives.
    ///
    /// Throws `ConveyError.credentialRefused` for a credential the task sets itself,
    /// `ConveyError.outboxLimitReached` beyond the configured limits, `ConveyError.outboxStorageFailed` when
    /// the folder cannot be written, and the errors building a request throws.
    @discardableResult
    public func enqueue<Task: DownloadingTask>(_ task: Task) async throws -> OutboxItem {
        let taskServer = task.server
        guard let remote = taskServer.remote else { throw ConveyError.noRemote(server: taskServer.name) }
        let redaction = taskServer.configuration.redaction
        let url = try RequestBuilder.url(path: task.path, queryParameters: task.queryParameters, queryItems: task.queryItems, remote: remote)
        try OutboxCredentials.checkURL(url, redaction: redaction)
        let method = task.method
        let requestBody = try await task.requestBody
        if requestBody != nil, method.forbidsBody {
            throw ConveyError.encodingFailed(
                subject: "the body of a \(method) request", reason: "\(method) requests cannot carry a body; use POST or PUT")
        }
        let taskHeaders = try await task.headers
        try FieldValidation.check(taskHeaders, source: .taskHeaders)
        let serverHeaders = try await taskServer.headers(for: task)
        var fields = try OutboxCredentials.storableFields(taskHeaders, serverSupplied: serverHeaders, redaction: redaction)
        let keyField = configuration.idempotencyKeyField
        let ownKey = fields.last { $0.name.caseInsensitiveCompare(keyField) == .orderedSame }?.value
        fields.removeAll { $0.name.caseInsensitiveCompare(keyField) == .orderedSame }
        let body = try await bodyBytes(of: requestBody)

        let now = configuration.clock.now
        let request = StoredRequest(
            method: method.rawValue, url: url, path: task.path, fields: fields,
            // The draft standard's form: a structured-field string.
            idempotencyKey: ownKey ?? "\"\(UUID().uuidString.lowercased())\"",
            contentType: requestBody?.contentType, contentEncoding: requestBody?.contentEncoding,
            enqueuedAt: now, taskName: String(describing: Task.self))
        let recordSize = (try? JSONEncoder().encode(request).count) ?? 0
        try checkLimits(adding: Int64(OutboxFileFormat.headerSize + recordSize + body.count))

        let id = newID()
        let store = store
        let size = try await Self.onDisk { try store.writeItem(id: id, request: request, body: body) }
        entries[id] = Entry(request: request, state: StoredState(pendingSince: now), size: size)
        pendingOrder.append(id)
        if pendingOrder.count > 1, pendingOrder[pendingOrder.count - 2] > id { pendingOrder.sort() }
        finalHooks[id] = FinalHooks(for: task)
        publish(id)
        wake()
        // `entries[id]` was set just above.
        return item(id: id) ?? OutboxItem(id: id, method: method, url: url, idempotencyKey: request.idempotencyKey, taskName: request.taskName,
                                          enqueuedAt: now, attempts: 0, nextAttemptAt: nil, lastError: nil, state: .pending)
    }

    /// Throws when one more item of `size` bytes would pass a limit.
    private func checkLimits(adding size: Int64) throws(ConveyError) {
        let held = entries.values.filter { $0.state.phase != .delivered }
        guard held.count < configuration.maximumItems else {
            throw .outboxLimitReached(limit: "maximumItems", maximum: Int64(configuration.maximumItems))
        }
        guard held.reduce(Int64(0), { $0 + $1.size }) + size <= configuration.maximumBytes else {
            throw .outboxLimitReached(limit: "maximumBytes", maximum: configuration.maximumBytes)
        }
    }

    /// The body's bytes: in memory already, or read from its file (at most `maximumBodySize`);
    /// a staged file the run would have removed is removed here.
    private func bodyBytes(of body: RequestBody?) async throws -> Data {
        // Held in memory: no larger than memory can count (2 GiB where `Int` has 32 bits).
        let limit = MemorySizes.bufferLimit(configuration.maximumBodySize)
        switch body?.content {
        case nil:
            return Data()
        case .data(let data):
            guard Int64(data.count) <= limit else { throw ConveyError.outboxLimitReached(limit: "maximumBodySize", maximum: limit) }
            return data
        case .file(let file, let removeWhenDone):
            defer { if removeWhenDone { try? FileManager.default.removeItem(at: file) } }
            let path = file.path(percentEncoded: false)
            return try await Self.onDisk {
                // Opened as the upload would open it; only the outbox's own files need be owner-only.
                let handle = try FileHandle(forReadingFrom: URL(filePath: path))
                defer { try? handle.close() }
                let data = try handle.read(upToCount: MemorySizes.readCount(toExceed: limit)) ?? Data()
                guard Int64(data.count) <= limit else { throw ConveyError.outboxLimitReached(limit: "maximumBodySize", maximum: limit) }
                return data
            }
        }
    }
}
