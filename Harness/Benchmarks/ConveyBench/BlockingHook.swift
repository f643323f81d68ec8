import BenchSupport
@_spi(Transport) import Convey
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A 1 KB GET that fails when no byte arrives for 100 ms.
struct IdleTimedGet: ServerTask {
    let server: ConveyServer
    var path: String { "1k.bin" }
    var configuration: TaskConfiguration? { TaskConfiguration(timeout: .milliseconds(100), coalescesRequests: false) }
}

/// A 1 KB GET whose `willSendRequest` blocks its thread, as a synchronous keychain or file read does.
struct BlockingHookGet: ServerTask {
    let server: ConveyServer
    var path: String { "1k.bin" }

    func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
        // A wait nobody signals: the thread blocks as in a synchronous read.
        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + BlockingHookBench.block)
        return request
    }
}

/// Issue 19's blocking hook: 64 GETs in flight with a 100 ms idle timeout, alone and beside a
/// task whose hook blocks its thread for 150 ms every 0.5 s, interleaved in each round. Reports
/// the timeouts among the GETs and their throughput beside the hook as a ratio to alone.
enum BlockingHookBench {
    static let title = "64 × 1 KB GET with a 100 ms idle timeout, beside a hook that blocks 150 ms every 0.5 s"
    static let concurrency = 64
    static let block: TimeInterval = 0.15
    static let period = Duration.milliseconds(500)

    /// One batch: throughput of the GETs that succeeded, how many timed out, how many times the hook blocked.
    struct Batch {
        var requestsPerSecond: Double
        var timeouts: Int
        var blocks: Int
        /// The slowest GET that succeeded, in milliseconds.
        var slowest: Double
    }

    static func run(base: URL, requests: Int, rounds: Int) async throws {
        let transport: BuiltInTransport = BuiltInTransport.curl.isAvailable ? .curl : .urlSession
        let server = await makeServer(Remote(name: "nginx", url: base), transport: transport)
        print("\n## \(title): \(requests) requests per batch, Convey on \(transport == .curl ? "curl" : "URLSession")\n")
        _ = try await batch(server, requests: min(requests, 500), blocking: false)  // warm up
        var alone: [Batch] = [], beside: [Batch] = []
        for round in 1...rounds {
            // Alternate which goes first, so neither always runs on a warmer machine.
            for blocking in round % 2 == 1 ? [false, true] : [true, false] {
                let result = try await batch(server, requests: requests, blocking: blocking)
                if blocking { beside.append(result) } else { alone.append(result) }
                print("  round \(round) · \(blocking ? "beside the blocking hook (\(result.blocks) blocks)" : "alone"): "
                      + "\(format(result.requestsPerSecond)) req/s, \(result.timeouts) timeouts, slowest \(format(result.slowest, 1)) ms")
            }
        }
        let ratios = zip(beside, alone).map { $0.requestsPerSecond / $1.requestsPerSecond }
        print("\nMedians of \(rounds) rounds, (min–max) over the rounds; the ratio is per round, beside the hook over alone:\n")
        print("| GETs | req/s | timeouts (of \(requests) per batch) | slowest GET, ms | throughput × alone |")
        print("|---|---|---|---|---|")
        print("| alone | \(spread(alone.map(\.requestsPerSecond))) | \(spread(alone.map { Double($0.timeouts) })) | "
              + "\(spread(alone.map(\.slowest), digits: 1)) | – |")
        print("| beside the blocking hook | \(spread(beside.map(\.requestsPerSecond))) | \(spread(beside.map { Double($0.timeouts) })) | "
              + "\(spread(beside.map(\.slowest), digits: 1)) | \(spread(ratios, digits: 2)) |")
    }

    /// Runs `requests` GETs, 64 in flight, with the blocking task beside them when `blocking`.
    private static func batch(_ server: ConveyServer, requests: Int, blocking: Bool) async throws -> Batch {
        let timeouts = Counter()
        let blocks = Counter()
        let blocker: Task<Void, Never>? = blocking ? Task {
            let clock = ContinuousClock()
            var next = clock.now
            while !Task.isCancelled {
                _ = try? await BlockingHookGet(server: server).download()
                blocks.add()
                next += period
                try? await Task.sleep(until: next, clock: clock)
            }
        } : nil
        let measurement = try await measureWorkers(requests: requests, concurrency: concurrency) { group, perWorker in
            group.addTask {
                var latencies: [Double] = []
                for _ in 0..<perWorker {
                    let sent = ContinuousClock.now
                    do {
                        _ = try await IdleTimedGet(server: server).download()
                        latencies.append(microseconds(sent.duration(to: .now)))
                    } catch ConveyError.attemptTimedOut {
                        timeouts.add()
                    }
                }
                return latencies
            }
        }
        blocker?.cancel()
        await blocker?.value
        return Batch(requestsPerSecond: measurement.requestsPerSecond, timeouts: timeouts.value, blocks: blocks.value,
                     slowest: measurement.slowest / 1000)
    }
}

/// A count shared by tasks.
private final class Counter: @unchecked Sendable {  // guarded by: its NSLock
    private let lock = NSLock()
    private var count = 0

    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
