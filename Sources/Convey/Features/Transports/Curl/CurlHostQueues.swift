#if os(Linux) && canImport(CConveyCurlShim)
/// How many transfers run at once to one origin, on which of the transport's event loops, and
/// which wait for a turn, first come first served.
///
/// Why not curl's `CURLMOPT_MAX_HOST_CONNECTIONS`: libcurl 7.88 wakes one queued transfer per
/// finished one, and a woken transfer that loses the free connection to a newer one goes back
/// to sleep for good; under load a request stalls until its timeout. Queuing here also starts
/// a request's idle timer only once it is on the wire.
///
/// Over HTTP/1 every running transfer holds a connection, so the limit is connections per host.
/// Once an origin has answered over HTTP/2 or 3, up to `streamsPerMultiplexedOrigin` share its
/// connection.
///
/// With several loops, each keeps its own connections (a libcurl connection cache cannot be
/// shared between threads), so the limit is split between them: loop `i` of `n` runs at most its
/// share of an origin's transfers, and the shares add up to the limit. A loop then never needs
/// more connections to the origin than its share, and the transport never more than the limit.
/// A limit below the number of loops uses that many loops for the origin, one connection each.
struct CurlHostQueues<Item: AnyObject> {
    private struct Origin {
        /// Running transfers, per loop.
        var running: [Int]
        /// Items in arrival order from `firstWaiting` on; the slots before it were admitted and
        /// hold nothing, so that an admitted item is not kept alive here until the array is compacted.
        var waiting: [Item?] = []
        var firstWaiting = 0
        var multiplexes = false

        var hasWaiting: Bool { firstWaiting < waiting.count }
        var isIdle: Bool { !hasWaiting && running.allSatisfy { $0 == 0 } }
    }

    /// Transfers at once to an origin over HTTP/1; 0 means no limit.
    let connectionsPerOrigin: Int
    /// Transfers at once to an origin that multiplexes (HTTP/2 or 3).
    let streamsPerMultiplexedOrigin: Int
    /// How many event loops the transfers are spread over.
    let loops: Int
    private var origins: [String: Origin] = [:]
    /// How many transfers each loop was given, ever: which loops the load went to.
    private(set) var admittedPerLoop: [Int]

    init(connectionsPerOrigin: Int, streamsPerMultiplexedOrigin: Int = 100, loops: Int = 1) {
        self.connectionsPerOrigin = connectionsPerOrigin
        self.streamsPerMultiplexedOrigin = streamsPerMultiplexedOrigin
        self.loops = max(1, loops)
        admittedPerLoop = Array(repeating: 0, count: self.loops)
    }

    /// The loop `item` may run on now; `nil` if it waits its turn.
    mutating func admit(_ item: Item, origin key: String) -> Int? {
        // Taken out while it changes, so that its arrays are not copied.
        var origin = origins.removeValue(forKey: key) ?? Origin(running: Array(repeating: 0, count: loops))
        defer { origins[key] = origin }
        guard let loop = loopWithRoom(in: origin, preferring: nil) else {
            origin.waiting.append(item)
            return nil
        }
        start(on: loop, in: &origin)
        return loop
    }

    /// Waiting items admitted when another ended, each with its loop: most often none or one,
    /// which it holds without an array of its own.
    struct Admitted: RandomAccessCollection {
        private var single: (item: Item, loop: Int)?
        private var others: [(item: Item, loop: Int)] = []

        var startIndex: Int { 0 }
        var endIndex: Int { single == nil ? 0 : 1 + others.count }

        subscript(position: Int) -> (item: Item, loop: Int) {
            guard position > 0 else {
                guard let single else { preconditionFailure("index \(position) out of an empty collection") }
                return single
            }
            return others[position - 1]
        }

        mutating func append(_ admitted: (item: Item, loop: Int)) {
            if single == nil { single = admitted } else { others.append(admitted) }
        }
    }

    /// Records that an item running on `loop` ended, and whether its origin turned out to
    /// multiplex; returns the waiting items that may run now, already counted as running, each
    /// with its loop: `loop` itself first, where the freed connection is.
    mutating func finished(origin key: String, loop: Int, multiplexed: Bool) -> Admitted {
        var admitted = Admitted()
        guard var origin = origins.removeValue(forKey: key) else { return admitted }
        guard origin.running.indices.contains(loop) else {
            origins[key] = origin
            return admitted
        }
        origin.running[loop] = max(0, origin.running[loop] - 1)
        if multiplexed { origin.multiplexes = true }
        while origin.hasWaiting, let next = loopWithRoom(in: origin, preferring: loop) {
            guard let item = origin.waiting[origin.firstWaiting] else { break }
            admitted.append((item, next))
            origin.waiting[origin.firstWaiting] = nil
            origin.firstWaiting += 1
            start(on: next, in: &origin)
        }
        if origin.firstWaiting > 64, origin.firstWaiting * 2 > origin.waiting.count {
            origin.waiting.removeFirst(origin.firstWaiting)
            origin.firstWaiting = 0
        }
        origins[key] = origin
        forgetIdleOrigins()
        return admitted
    }

    /// Takes `item` out of its origin's queue; `false` when it was not waiting.
    mutating func removeWaiting(_ item: Item, origin key: String) -> Bool {
        guard var origin = origins.removeValue(forKey: key) else { return false }
        defer { origins[key] = origin }
        guard let index = origin.waiting[origin.firstWaiting...].firstIndex(where: { $0 === item }) else { return false }
        origin.waiting.remove(at: index)
        return true
    }

    /// How many origins are remembered before the idle ones are forgotten: an idle origin is kept
    /// so that the next request to it makes nothing anew, and memory stays flat however many
    /// hosts were visited.
    static var rememberedOrigins: Int { 64 }

    private mutating func forgetIdleOrigins() {
        guard origins.count > Self.rememberedOrigins else { return }
        origins = origins.filter { !$0.value.isIdle }
    }

    /// How many items wait across all origins.
    var waitingCount: Int {
        origins.values.reduce(0) { $0 + $1.waiting.count - $1.firstWaiting }
    }

    private mutating func start(on loop: Int, in origin: inout Origin) {
        origin.running[loop] += 1
        admittedPerLoop[loop] += 1
    }

    /// The loop with the most room for one more of the origin's transfers: `preferred` when it has
    /// any, else the lowest-numbered of the roomiest, so that a light load stays on one loop and
    /// keeps reusing its connections. `nil` when every loop is at its share.
    private func loopWithRoom(in origin: Origin, preferring preferred: Int?) -> Int? {
        if let preferred, origin.running[preferred] < limit(for: origin, loop: preferred) { return preferred }
        var best: Int?
        var bestRoom = 0
        for loop in 0..<loops {
            let room = limit(for: origin, loop: loop) - origin.running[loop]
            if room > bestRoom {
                best = loop
                bestRoom = room
            }
        }
        return best
    }

    /// Loop `loop`'s share of the origin's limit.
    private func limit(for origin: Origin, loop: Int) -> Int {
        guard connectionsPerOrigin > 0 else { return Int.max }
        let total = origin.multiplexes ? max(streamsPerMultiplexedOrigin, connectionsPerOrigin) : connectionsPerOrigin
        // Each loop used holds at least one connection: never more loops than connections allowed.
        let used = min(loops, connectionsPerOrigin)
        guard loop < used else { return 0 }
        return total / used + (loop < total % used ? 1 : 0)
    }
}
#endif
