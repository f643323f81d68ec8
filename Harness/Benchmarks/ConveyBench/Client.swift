import BenchSupport
@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// What one measured batch gave.
struct Measurement {
    var requestsPerSecond: Double
    var p50: Double
    var p99: Double
    /// The slowest request's latency, in microseconds.
    var slowest: Double = 0
    var cpuPerRequest: Double
    /// Voluntary + involuntary context switches of the process that ran the batch, per request.
    var contextSwitchesPerRequest: Double
    var coresUsed: Double
    /// Calls to the C allocator per request, by the whole process, when the allocation counter is preloaded.
    var allocationsPerRequest: Double?
    /// CPU per request of the event loop threads (`convey-loop-N`), or of the C loop's one thread;
    /// `nil` when the client ran on no such thread.
    var loopCPUPerRequest: Double?
    /// Calls to the C allocator per request by the event loop threads.
    var loopAllocationsPerRequest: Double?

    /// CPU per request of every other thread of the process.
    var restCPUPerRequest: Double? { loopCPUPerRequest.map { cpuPerRequest - $0 } }
}

/// One way of running a workload's batch of requests.
struct Client: Sendable {
    let name: String
    /// Whether the batch runs in this process: the memory run measures only those.
    let inProcess: Bool
    /// Runs `requests` requests with `concurrency` in flight.
    let runBatch: @Sendable (_ requests: Int, _ concurrency: Int) async throws -> Measurement

    /// A client whose workers run on the global concurrent pool, each request one `fetch`
    /// returning the body size.
    static func pooled(_ name: String, fetch: @escaping @Sendable () async throws -> Int) -> Client {
        Client(name: name, inProcess: true) { requests, concurrency in
            try await measureWorkers(requests: requests, concurrency: concurrency) { group, perWorker in
                group.addTask { try await timedRequests(perWorker, fetch) }
            }
        }
    }

    /// A client whose workers run isolated to `@ConveyActor`, as an app calling from the actor
    /// does: each `fetch` starts on the actor.
    static func onConveyActor(_ name: String, fetch: @escaping @ConveyActor @Sendable () async throws -> Int) -> Client {
        Client(name: name, inProcess: true) { requests, concurrency in
            try await measureWorkers(requests: requests, concurrency: concurrency) { group, perWorker in
                group.addTask { try await timedRequestsOnConveyActor(perWorker, fetch) }
            }
        }
    }
}

/// Each request's latency in microseconds, `count` requests one after another, on the caller's
/// executor.
func timedRequests(_ count: Int, isolation: isolated (any Actor)? = #isolation,
                   _ fetch: () async throws -> Int) async throws -> [Double] {
    var latencies: [Double] = []
    latencies.reserveCapacity(count)
    for _ in 0..<count {
        let sent = ContinuousClock.now
        _ = try await fetch()
        latencies.append(microseconds(sent.duration(to: .now)))
    }
    return latencies
}

/// `timedRequests` isolated to `@ConveyActor`: every request starts on the actor.
@ConveyActor
func timedRequestsOnConveyActor(_ count: Int, _ fetch: @ConveyActor @Sendable () async throws -> Int) async throws -> [Double] {
    try await timedRequests(count, fetch)
}

/// Runs `concurrency` workers, each added to the group by `addWorker` with its share of the
/// requests, and measures the batch: wall time, latencies, and this process's CPU time and
/// context switches.
func measureWorkers(requests: Int, concurrency: Int,
                    addWorker: (inout ThrowingTaskGroup<[Double], any Error>, Int) -> Void) async throws -> Measurement {
    let perWorker = max(1, requests / concurrency)
    let cpuBefore = ProcessFigures.cpuMicroseconds
    let switchesBefore = ProcessFigures.contextSwitches
    let allocationsBefore = ProcessFigures.allocations
    let loopBefore = ThreadFigures.snapshot()
    let started = ContinuousClock.now
    let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
        for _ in 0..<concurrency { addWorker(&group, perWorker) }
        return try await group.reduce(into: [Double]()) { $0 += $1 }.sorted()
    }
    let seconds = microseconds(started.duration(to: .now)) / 1e6
    let cpu = ProcessFigures.cpuMicroseconds - cpuBefore
    let switches = ProcessFigures.contextSwitches - switchesBefore
    let allocations = zip(ProcessFigures.allocations, allocationsBefore).map { $0 - $1 }
    let loopAfter = ThreadFigures.snapshot()
    // The loop's figures count only when its threads stayed the same over the batch.
    let loop = zip(loopAfter, loopBefore).flatMap { $0.threads == $1.threads ? ($0, $1) : nil }
    let loopCPU = loop.map { $0.cpuMicroseconds - $1.cpuMicroseconds }
    let loopAllocations = loop.flatMap { zip($0.allocations, $1.allocations) }.map { $0 - $1 }
    let count = Double(latencies.count)
    // No latency at all when every request failed in a way the worker counts (a timeout).
    return Measurement(requestsPerSecond: count / seconds,
                       p50: latencies.isEmpty ? 0 : latencies[latencies.count / 2],
                       p99: latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, latencies.count * 99 / 100)],
                       slowest: latencies.last ?? 0,
                       cpuPerRequest: cpu / count,
                       contextSwitchesPerRequest: Double(switches) / count,
                       coresUsed: cpu / 1e6 / seconds,
                       allocationsPerRequest: allocations.map { Double($0) / count },
                       loopCPUPerRequest: loopCPU.map { $0 / count },
                       loopAllocationsPerRequest: loopAllocations.map { Double($0) / count })
}

/// Both values, when both are there.
private func zip<First, Second>(_ first: First?, _ second: Second?) -> (First, Second)? {
    guard let first, let second else { return nil }
    return (first, second)
}

func microseconds(_ duration: Duration) -> Double {
    let components = duration.components
    return Double(components.seconds) * 1e6 + Double(components.attoseconds) / 1e12
}
