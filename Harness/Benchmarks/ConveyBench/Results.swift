import Foundation

/// A workload's measurements, per client and concurrency, in round order, and their tables.
struct Results {
    private var batches: [String: [Int: [Measurement]]] = [:]

    /// The goals against the C loop on small GETs (issue 14): throughput at least this share of
    /// the loop's, CPU per request at most this multiple of it, and at most this many context
    /// switches per request from `switchesGoalFrom` in flight on.
    static let throughputGoal = 0.8
    static let cpuGoal = 1.5
    static let switchesGoal = 1.0
    static let switchesGoalFrom = 16
    /// The most calls to the C allocator per small GET through Convey (issue 26; the C loop makes about 35).
    static let allocationsGoal = 55.0
    /// Issue 36's goals against the C loop, from `loopGoalsFrom` in flight on: the event loop
    /// thread's CPU per request at most this multiple of the C loop's whole CPU per request,
    /// throughput at least this share of its own, and the whole process's CPU per request at
    /// most this multiple of its own.
    static let loopCPUGoal = 1.5
    static let loopThroughputGoal = 0.5
    static let loopWholeCPUGoal = 2.5
    static let loopGoalsFrom = 16

    mutating func record(_ measurement: Measurement, client: String, concurrency: Int) {
        batches[client, default: [:]][concurrency, default: []].append(measurement)
    }

    private func measurements(_ client: String, _ concurrency: Int) -> [Measurement] {
        batches[client]?[concurrency] ?? []
    }

    /// Medians and ranges over the rounds, with throughput against raw URLSession's median.
    func printMedians(of workload: Workload, rounds: Int) {
        print("\nMedians of \(rounds) rounds, (min–max) over the rounds:\n")
        print("| client | in flight | req/s | vs raw URLSession | p50 µs | p99 µs | CPU µs/req | context switches/req | allocations/req | cores used |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for concurrency in workload.concurrencies {
            let baseThroughput = median(measurements("URLSession (raw)", concurrency).map(\.requestsPerSecond))
            for client in workload.clients {
                let runs = measurements(client.name, concurrency)
                let throughput = median(runs.map(\.requestsPerSecond))
                let ratio = baseThroughput > 0 ? format(throughput / baseThroughput * 100) + "%" : "–"
                print("| \(client.name) | \(concurrency) | \(spread(runs.map(\.requestsPerSecond))) | \(ratio) | "
                      + "\(format(median(runs.map(\.p50)))) | \(format(median(runs.map(\.p99)))) | "
                      + "\(spread(runs.map(\.cpuPerRequest), digits: 1)) | \(spread(runs.map(\.contextSwitchesPerRequest), digits: 2)) | "
                      + "\(allocations(runs)) | \(format(median(runs.map(\.coresUsed)), 2)) |")
            }
        }
    }

    /// The median allocations per request over the rounds, "–" when they were not counted.
    private func allocations(_ runs: [Measurement]) -> String {
        let counted = runs.compactMap(\.allocationsPerRequest)
        return counted.isEmpty ? "–" : format(median(counted), 1)
    }

    /// Each client's throughput and CPU per request over the C loop's in the same round, as the
    /// median and range of those per-round ratios, and whether the medians meet the goals.
    func printRatiosToCeiling(of workload: Workload) {
        print("\nAgainst the C loop within each round: median (min–max) of the per-round ratios. Goals: ≥ \(format(Self.throughputGoal, 1))× "
              + "its throughput, ≤ \(format(Self.cpuGoal, 1))× its CPU per request, ≤ \(format(Self.switchesGoal, 0)) context switch "
              + "per request at \(Self.switchesGoalFrom)+ in flight, ≤ \(format(Self.allocationsGoal, 0)) allocations per request "
              + "(counted, when the allocation counter is preloaded).\n")
        print("| client | in flight | throughput × C loop | CPU/req × C loop | context switches/req | allocations/req (C loop's) | goals |")
        print("|---|---|---|---|---|---|---|")
        for concurrency in workload.concurrencies {
            let ceiling = measurements(CurlCeiling.clientName, concurrency)
            for client in workload.clients where client.name != CurlCeiling.clientName {
                let runs = measurements(client.name, concurrency)
                let throughput = zip(runs, ceiling).map { $0.requestsPerSecond / $1.requestsPerSecond }
                let cpu = zip(runs, ceiling).map { $0.cpuPerRequest / $1.cpuPerRequest }
                let switches = median(runs.map(\.contextSwitchesPerRequest))
                var missed: [String] = []
                if median(throughput) < Self.throughputGoal { missed.append("throughput") }
                if median(cpu) > Self.cpuGoal { missed.append("CPU") }
                if concurrency >= Self.switchesGoalFrom, switches > Self.switchesGoal { missed.append("switches") }
                let allocationCount = runs.compactMap(\.allocationsPerRequest)
                if !allocationCount.isEmpty, median(allocationCount) > Self.allocationsGoal { missed.append("allocations") }
                print("| \(client.name) | \(concurrency) | \(spread(throughput, digits: 2)) | \(spread(cpu, digits: 2)) | "
                      + "\(format(switches, 2)) | \(allocations(runs)) (\(allocations(ceiling))) | "
                      + "\(missed.isEmpty ? "met" : "missed: " + missed.joined(separator: ", ")) |")
            }
        }
    }

    /// Each client's CPU per request split between the event loop's thread and the rest of the
    /// process, beside the C loop's (one thread, so nearly all of it its loop's), with the loop
    /// thread's CPU and the whole process's over the C loop's whole CPU in the same round, and
    /// issue 36's goals.
    func printThreadSplit(of workload: Workload) {
        print("\nCPU per request by thread: the event loop's thread (`convey-loop-N`; the C loop's one thread) and the rest of "
              + "the process, medians (min–max) over the rounds; ratios are per round, to the C loop's whole CPU per request. "
              + "Goals from \(Self.loopGoalsFrom) in flight: loop thread ≤ \(format(Self.loopCPUGoal, 1))×, throughput "
              + "≥ \(format(Self.loopThroughputGoal, 1))×, whole process ≤ \(format(Self.loopWholeCPUGoal, 1))× the C loop's.\n")
        print("| client | in flight | loop thread µs/req | rest µs/req | whole µs/req | loop thread × C loop | whole × C loop | "
              + "throughput × C loop | loop allocations/req | goals |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for concurrency in workload.concurrencies {
            let ceiling = measurements(CurlCeiling.clientName, concurrency)
            for client in workload.clients {
                let runs = measurements(client.name, concurrency)
                let loop = runs.compactMap(\.loopCPUPerRequest)
                // Clients that run nothing on an event loop (URLSession, the stub) leave it idle.
                guard !loop.isEmpty, median(loop) > 0.05 * median(runs.map(\.cpuPerRequest)) else { continue }
                let isCeiling = client.name == CurlCeiling.clientName
                let loopRatio = zip(runs, ceiling).compactMap { run, reference in run.loopCPUPerRequest.map { $0 / reference.cpuPerRequest } }
                let wholeRatio = zip(runs, ceiling).map { $0.cpuPerRequest / $1.cpuPerRequest }
                let throughput = zip(runs, ceiling).map { $0.requestsPerSecond / $1.requestsPerSecond }
                var goals = "–"
                if !isCeiling, concurrency >= Self.loopGoalsFrom, !ceiling.isEmpty {
                    var missed: [String] = []
                    if median(loopRatio) > Self.loopCPUGoal { missed.append("loop CPU") }
                    if median(throughput) < Self.loopThroughputGoal { missed.append("throughput") }
                    if median(wholeRatio) > Self.loopWholeCPUGoal { missed.append("whole CPU") }
                    goals = missed.isEmpty ? "met" : "missed: " + missed.joined(separator: ", ")
                }
                let loopAllocations = runs.compactMap(\.loopAllocationsPerRequest)
                print("| \(client.name) | \(concurrency) | \(spread(loop, digits: 1)) | \(spread(runs.compactMap(\.restCPUPerRequest), digits: 1)) | "
                      + "\(spread(runs.map(\.cpuPerRequest), digits: 1)) | \(isCeiling ? "–" : spread(loopRatio, digits: 2)) | "
                      + "\(isCeiling ? "–" : spread(wholeRatio, digits: 2)) | \(isCeiling ? "–" : spread(throughput, digits: 2)) | "
                      + "\(loopAllocations.isEmpty ? "–" : spread(loopAllocations, digits: 1)) | \(goals) |")
            }
        }
    }

    /// Each `--loops` client's throughput and CPU per request over the same client's with the
    /// first loop count, within each round: median (min–max) of the per-round ratios.
    func printLoopRatios(of workload: Workload, loops: [Int]) {
        guard let first = loops.first else { return }
        print("\nEvent loops against \(first) within each round: median (min–max) of the per-round ratios.\n")
        print("| client | in flight | loops | throughput × \(first) loop\(first == 1 ? "" : "s") | CPU/req × \(first) loop\(first == 1 ? "" : "s") |")
        print("|---|---|---|---|---|")
        for concurrency in workload.concurrencies {
            for name in [LoopComparison.conveyName, LoopComparison.rawName] {
                let reference = measurements(name(first), concurrency)
                guard !reference.isEmpty else { continue }
                for count in loops.dropFirst() {
                    let runs = measurements(name(count), concurrency)
                    let throughput = zip(runs, reference).map { $0.requestsPerSecond / $1.requestsPerSecond }
                    let cpu = zip(runs, reference).map { $0.cpuPerRequest / $1.cpuPerRequest }
                    print("| \(name(count)) | \(concurrency) | \(count) | \(spread(throughput, digits: 2)) | \(spread(cpu, digits: 2)) |")
                }
            }
        }
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

/// `median (min–max)`, or the median alone when there is one value.
func spread(_ values: [Double], digits: Int = 0) -> String {
    guard let low = values.min(), let high = values.max() else { return "–" }
    let middle = format(median(values), digits)
    return values.count == 1 ? middle : "\(middle) (\(format(low, digits))–\(format(high, digits)))"
}

func format(_ value: Double, _ digits: Int = 0) -> String {
    String(format: "%.\(digits)f", value)
}
