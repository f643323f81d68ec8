#if canImport(CConveyCurlShim)
/// How many transfers run at once to one origin, and which wait for a turn, first come first served.
///
/// Why not curl's `CURLMOPT_MAX_HOST_CONNECTIONS`: libcurl 7.88 wakes one queued transfer per
/// finished one, and a woken transfer that loses the free connection to a newer one goes back
/// to sleep for good; under load a request stalls until its timeout. Queuing here also starts
/// a request's idle timer only once it is on the wire.
///
/// Over HTTP/1 every running transfer holds a connection, so the limit is connections per host.
/// Once an origin has answered over HTTP/2 or 3, up to `streamsPerMultiplexedOrigin` share its
/// connection.
struct CurlHostQueues<Item: AnyObject> {
    private struct Origin {
        var running = 0
        var waiting: [Item] = []
        var firstWaiting = 0
        var multiplexes = false

        var hasWaiting: Bool { firstWaiting < waiting.count }
    }

    /// Transfers at once to an origin over HTTP/1; 0 means no limit.
    let connectionsPerOrigin: Int
    /// Transfers at once to an origin that multiplexes (HTTP/2 or 3).
    let streamsPerMultiplexedOrigin: Int
    private var origins: [String: Origin] = [:]

    init(connectionsPerOrigin: Int, streamsPerMultiplexedOrigin: Int = 100) {
        self.connectionsPerOrigin = connectionsPerOrigin
        self.streamsPerMultiplexedOrigin = streamsPerMultiplexedOrigin
    }

    /// Whether `item` may run now; if not, it waits its turn.
    mutating func admit(_ item: Item, origin key: String) -> Bool {
        var origin = origins[key] ?? Origin()
        defer { origins[key] = origin }
        if origin.running < limit(for: origin) {
            origin.running += 1
            return true
        }
        origin.waiting.append(item)
        return false
    }

    /// Records that a running item ended, and whether its origin turned out to multiplex;
    /// returns the waiting items that may run now, already counted as running.
    mutating func finished(origin key: String, multiplexed: Bool) -> [Item] {
        guard var origin = origins[key] else { return [] }
        origin.running = max(0, origin.running - 1)
        if multiplexed { origin.multiplexes = true }
        var admitted: [Item] = []
        while origin.hasWaiting, origin.running < limit(for: origin) {
            admitted.append(origin.waiting[origin.firstWaiting])
            origin.firstWaiting += 1
            origin.running += 1
        }
        if origin.firstWaiting > 64, origin.firstWaiting * 2 > origin.waiting.count {
            origin.waiting.removeFirst(origin.firstWaiting)
            origin.firstWaiting = 0
        }
        // Forget idle origins, so that memory stays flat however many hosts were visited.
        origins[key] = origin.running == 0 && !origin.hasWaiting ? nil : origin
        return admitted
    }

    /// Takes `item` out of its origin's queue; `false` when it was not waiting.
    mutating func removeWaiting(_ item: Item, origin key: String) -> Bool {
        guard var origin = origins[key],
              let index = origin.waiting[origin.firstWaiting...].firstIndex(where: { $0 === item }) else { return false }
        origin.waiting.remove(at: index)
        origins[key] = origin.running == 0 && !origin.hasWaiting ? nil : origin
        return true
    }

    /// How many items wait across all origins.
    var waitingCount: Int {
        origins.values.reduce(0) { $0 + $1.waiting.count - $1.firstWaiting }
    }

    private func limit(for origin: Origin) -> Int {
        guard connectionsPerOrigin > 0 else { return Int.max }
        return origin.multiplexes ? max(streamsPerMultiplexedOrigin, connectionsPerOrigin) : connectionsPerOrigin
    }
}
#endif
