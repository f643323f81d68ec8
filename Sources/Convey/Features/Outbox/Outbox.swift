import Foundation

/// A folder where requests wait until they are delivered: through crashes, restarts and hours
/// offline, exactly once where the server honours the `Idempotency-Key` each item carries.
///
/// ```swift
/// let outbox = try await Outbox(folder: appSupport.appending(path: "outbox"), server: AppServer.shared)
/// let item = try await outbox.enqueue(PlaceOrder(order: order))   // returns once it is on disk
/// Task { try await outbox.run() }                                   // delivers, now and after every restart
/// for await change in outbox.changes() where change.isFinished { … }
/// ```
///
/// - **Enqueue is durable**: the request (method, absolute URL, fields, body) is written to a new
///   file, synced, renamed into place and the folder synced before `enqueue` returns; a process
///   killed during an enqueue leaves the whole item or nothing.
/// - **No credentials on disk**: credential fields the server's `headers(for:)` supplies are left
///   out and asked for again at every attempt; one the task sets itself is refused
///   (`ConveyError.credentialRefused`).
/// - **One key per item**, sent by every attempt, in this process or after a restart.
/// - **Delivery** goes through the ordinary pipeline (hooks, 401 → refresh → retry, echo,
///   recording), one item after another in enqueue order unless `Configuration.concurrency`
///   allows more, retried by `Configuration.retryPolicy`.
/// - **Every item ends delivered or failed**, marked only after a response arrived (or the
///   error was final); failed items stay until `retry(_:)` or `drop(_:)`. The server's
///   `didFinish(task:response:error:)`, and the enqueued task's own `didFinish(with:)`,
///   `didSucceed(with:)` or `didFail(with:)` when it was enqueued by this outbox, run once per item.
/// - **One owner at a time**: delivering, retrying and dropping take the folder's lock, so two
///   processes never send the same item at once. Enqueueing and reading need no lock. The lock is
///   let go of while the app is suspended, and taken again after (`FileLocks`).
///
/// Docs/outbox.md describes the guarantees, the folder's format and each platform.
@ConveyActor
public final class Outbox {
    /// The folder the items live in.
    public let folder: URL
    /// The server every attempt runs on: its transport, `headers(for:)`, credential refresh and hooks.
    public let server: ConveyServer
    /// How the outbox delivers and what it holds.
    public let configuration: Configuration

    let store: OutboxFolder
    /// The items as this outbox knows them.
    var entries: [String: Entry] = [:]
    /// The IDs of pending items, sorted: the enqueue order.
    var pendingOrder: [String] = []
    var damaged: [(name: String, reason: String)] = []
    /// The folder's lock, while this outbox delivers or changes items.
    var ownership: FolderLock?
    /// Whether the folder's lock is let go of for the app's suspension (`FileLocks`): delivery
    /// starts no attempt, and `run()` waits, without it, until it is retaken.
    var lockReleased = false
    /// Whether the folder's lock file could not be opened because its data is protected and
    /// unavailable (a locked device): delivery waits until it can be.
    var lockFileUnavailable = false
    var isDelivering = false
    var inFlight: [String: Task<Void, Never>] = [:]
    /// The items whose attempt was stopped from outside (a release, a stop) since delivery began: still pending, not done.
    var stoppedAttempts: Set<String> = []
    var observers: [UUID: AsyncStream<OutboxItem>.Continuation] = [:]
    var outcomeWaiters: [String: [UUID: CheckedContinuation<OutboxItem, any Error>]] = [:]
    /// The enqueued tasks' own final hooks, for items enqueued by this outbox.
    var finalHooks: [String: FinalHooks] = [:]
    var wakeup: CheckedContinuation<Void, Never>?
    var wakeRequested = false
    /// Consecutive attempts that could not connect at all: the offline backoff.
    var offlineStreak = 0
    /// Whether an item's files could not be read because their data is protected and unavailable
    /// (a locked device): delivery waits until they can be.
    var protectedDataUnavailable = false
    private var lastIDMicroseconds: UInt64 = 0

    /// One item in memory.
    struct Entry {
        var request: StoredRequest
        var state: StoredState
        /// The request file's size, for `maximumBytes`.
        var size: Int64
        /// The body a finished item keeps: the delivered response's, or an HTTP error's.
        var keptBody = Data()
        /// The error of an item that failed in this process, with its full type.
        var liveError: (any Error)?
    }

    /// Opens the outbox in `folder`, creating it (owner-only) when missing, and reads its items.
    ///
    /// Opening takes no lock: several processes may open one folder to enqueue and read; the one
    /// that delivers (`run()`, `deliverPending(once:)`) owns it meanwhile.
    public init(folder: URL, server: ConveyServer = .default, configuration: Configuration = Configuration()) async throws {
        self.folder = folder
        self.server = server
        self.configuration = configuration
        store = try OutboxFolder(url: folder, maximumBodySize: configuration.maximumBodySize)
        lockReleased = FileLockRegistry.current.register(self)
        await reload(tidy: false)
    }

    // MARK: - Reading

    /// Every item, in enqueue order, as this outbox last read or changed them. Items other
    /// processes enqueued since appear after `refresh()` (and whenever this outbox delivers).
    public var items: [OutboxItem] {
        entries.keys.sorted().compactMap(item(id:))
    }

    /// The item with this ID, or `nil`.
    public func item(id: String) -> OutboxItem? {
        guard let entry = entries[id] else { return nil }
        let state: OutboxItem.State = switch entry.state.phase {
        case .pending: .pending
        case .delivered: .delivered(statusCode: entry.state.statusCode ?? 0, body: entry.keptBody)
        case .failed: .failed(entry.liveError ?? entry.state.failure?.error(body: entry.keptBody) ?? ConveyError.notDelivered(entry.state.lastError ?? "failed"))
        }
        return OutboxItem(id: id, method: HTTPMethod(rawValue: entry.request.method), url: entry.request.url,
                          idempotencyKey: entry.request.idempotencyKey, taskName: entry.request.taskName,
                          enqueuedAt: entry.request.enqueuedAt, attempts: entry.state.attempts,
                          nextAttemptAt: entry.state.phase == .pending ? entry.state.notBefore : nil,
                          lastError: entry.state.lastError, state: state)
    }

    /// Files in the folder that are not sound items, and why: those set aside in `set-aside/`,
    /// and (until the folder's owner sets them aside) those still in place.
    public var damagedFiles: [(name: String, reason: String)] { damaged }

    /// Reads the folder again: items other processes enqueued, and states they changed.
    public func refresh() async {
        await reload(tidy: ownership != nil && !isDelivering)
    }

    /// Every change to an item from now on (enqueued, attempted, delivered, failed, retried), in
    /// order. A consumer more than 10,000 changes behind loses the oldest.
    public func changes() -> AsyncStream<OutboxItem> {
        let (stream, continuation) = AsyncStream.makeStream(of: OutboxItem.self, bufferingPolicy: .bufferingNewest(10_000))
        let token = UUID()
        observers[token] = continuation
        continuation.onTermination = { _ in Task { @ConveyActor [weak self] in self?.observers[token] = nil } }
        return stream
    }

    /// Waits until the item is delivered or failed, and returns it. Throws
    /// `ConveyError.unknownOutboxItem` for an ID the outbox does not have (or that is dropped
    /// meanwhile), and `CancellationError` when the calling task is cancelled.
    public func outcome(of id: String) async throws -> OutboxItem {
        guard let current = item(id: id) else { throw ConveyError.unknownOutboxItem(id) }
        if current.isFinished { return current }
        let token = UUID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    outcomeWaiters[id, default: [:]][token] = continuation
                }
            }
        } onCancel: {
            Task { @ConveyActor [weak self] in
                self?.outcomeWaiters[id]?.removeValue(forKey: token)?.resume(throwing: CancellationError())
            }
        }
    }

    /// Tells observers and waiters about the item's new state.
    func publish(_ id: String) {
        guard let item = item(id: id) else {
            for waiter in outcomeWaiters.removeValue(forKey: id)?.values ?? [:].values { waiter.resume(throwing: ConveyError.unknownOutboxItem(id)) }
            return
        }
        for observer in observers.values { observer.yield(item) }
        if item.isFinished {
            for waiter in outcomeWaiters.removeValue(forKey: id)?.values ?? [:].values { waiter.resume(returning: item) }
        }
    }

    /// Replaces what this outbox knows with what the folder holds; the owner also tidies it.
    /// With `newOnly`, adds the items it does not know yet and leaves the others as they are.
    func reload(tidy: Bool, newOnly: Bool = false) async {
        let store = store
        let now = configuration.clock.now
        let retention = configuration.deliveredRetention
        let known = newOnly ? Set(entries.keys) : nil
        let scan = await Self.onDisk { store.scan(tidy: tidy, now: now, deliveredRetention: retention, skipping: known) }
        var loaded: [String: Entry] = [:]
        for scanned in scan.items {
            var state = scanned.state ?? StoredState(pendingSince: scanned.request.enqueuedAt)
            var keptBody = Data()
            if let damage = scanned.stateDamage {
                // A lost state is made pending again: sending the item once more, with its key, is
                // safe; dropping or failing it would not be.
                state = StoredState(pendingSince: now)
                state.lastError = "its state file was unreadable (\(damage)); it is pending again"
            } else if state.phase != .pending {
                keptBody = await Self.onDisk { (try? store.readState(id: scanned.id))?.bytes ?? Data() }
            }
            var entry = Entry(request: scanned.request, state: state, size: scanned.size, keptBody: keptBody)
            if let known = entries[scanned.id], known.state.phase == state.phase { entry.liveError = known.liveError }
            loaded[scanned.id] = entry
            lastIDMicroseconds = max(lastIDMicroseconds, UInt64(scanned.id.prefix(16), radix: 16) ?? 0)
        }
        let previous = entries
        if newOnly { loaded.merge(previous) { _, known in known } }
        // Items that cannot be read for now (a locked device) stay as this outbox knew them.
        for id in scan.unavailable { loaded[id] = previous[id] }
        protectedDataUnavailable = !scan.unavailable.isEmpty
        entries = loaded
        pendingOrder = loaded.filter { $0.value.state.phase == .pending }.keys.sorted()
        damaged = scan.damaged
        for id in Set(previous.keys).union(loaded.keys) where previous[id]?.state != loaded[id]?.state {
            publish(id)
        }
    }

    /// A new ID: microseconds since 1970 in 16 hex digits (never lower than any before it in this
    /// folder as far as this outbox knows, so IDs sort in enqueue order), then 8 random hex digits.
    func newID() -> String {
        let now = UInt64(max(0, configuration.clock.now.timeIntervalSince1970 * 1_000_000))
        lastIDMicroseconds = max(now, lastIDMicroseconds + 1)
        let time = String(lastIDMicroseconds, radix: 16)
        let random = String(UInt32.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - time.count) + time + "-" + String(repeating: "0", count: 8 - random.count) + random
    }

    /// Runs blocking disk work off `ConveyActor` and off the cooperative pool: its syncs wait
    /// for the drive (`DurableFiles`).
    nonisolated static func onDisk<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
        await DurableFiles.perform(work)
    }

    /// Runs blocking disk work that may fail off `ConveyActor` and off the cooperative pool.
    nonisolated static func onDisk<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await DurableFiles.perform(work)
    }
}

/// The enqueued task's own hooks, run once for its item's final outcome (in the process that enqueued it).
struct FinalHooks {
    let delivered: @ConveyActor (ServerResponse<Data>) async -> Void
    let failed: @ConveyActor (any Error) async -> Void

    @ConveyActor
    init<Task: DownloadingTask>(for task: Task) {
        delivered = { response in
            do {
                let payload = try PayloadDecoding.decode(Task.DownloadPayload.self, from: response.data, using: task.decoder, url: response.request.url)
                await task.didFinish(with: response.replacingPayload(payload))
                await task.didSucceed(with: response)
            } catch {
                await task.didFail(with: error)
            }
        }
        failed = { error in await task.didFail(with: error) }
    }
}
