// CacheBench: DataCache latency and throughput, beside a loopback nginx round trip measured in
// the same run. Start it with scripts/bench-cache (release build, local nginx on a free port).
@_spi(Transport) @_spi(Tools) import Convey
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Median and 99th percentile of per-operation times in microseconds, and the operation rate.
struct Measurement {
    let name: String
    let median: Double
    let p99: Double
    let perSecond: Double

    func line() -> String {
        String(format: "%-44@ median %9.2f µs   p99 %9.2f µs   %10.0f /s", name as NSString, median, p99, perSecond)
    }
}

/// Times `operation` `count` times after `warmup` untimed runs. Runs off the main actor.
@concurrent
func measure(_ name: String, count: Int, warmup: Int = 100, batch: Int = 1, _ operation: (Int) async throws -> Void) async rethrows -> Measurement {
    for index in 0..<warmup { try await operation(index) }
    var samples: [Double] = []
    samples.reserveCapacity(count / batch)
    let clock = ContinuousClock()
    let start = clock.now
    var index = 0
    while index < count {
        let batchStart = clock.now
        for offset in 0..<batch { try await operation(index + offset) }
        samples.append((clock.now - batchStart).microseconds / Double(batch))
        index += batch
    }
    let total = (clock.now - start).microseconds
    samples.sort()
    return Measurement(name: name, median: samples[samples.count / 2], p99: samples[min(samples.count - 1, samples.count * 99 / 100)],
                       perSecond: Double(count) / total * 1_000_000)
}

extension Duration {
    var microseconds: Double { Double(components.seconds) * 1e6 + Double(components.attoseconds) / 1e12 }
}

/// A GET through the Convey pipeline with a chosen cache strategy.
struct BenchTask: ServerTask {
    let server: ConveyServer
    let path: String
    let cacheStrategy: CacheStrategy
    var echoStyle: TaskEchoStyle { .none }
}

@ConveyActor
func makeServer(remote: Remote, cache: DataCache?, coalescing: Bool = true) -> ConveyServer {
    var configuration = ServerConfiguration(defaultEchoStyle: .none)
    configuration.cache = cache
    configuration.coalescesRequests = coalescing
    return ConveyServer(remote: remote, configuration: configuration)
}

/// The requests nginx logged for URLs containing `marker`, once at least `atLeast` are in (nginx
/// writes a line after the response, so the last lines may trail the client by a moment).
func countedRequests(marker: String, logPath: String, atLeast: Int) async throws -> Int {
    var count = 0
    for _ in 0..<500 {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        count = text.split(separator: "\n").filter { $0.contains(marker) }.count
        if count >= atLeast { break }
        try await Task.sleep(for: .milliseconds(10))
    }
    return count
}

extension ConveyServer {
    func setTransport(_ transport: any ConveyTransport) { self.transport = transport }
}

@ConveyActor
func fetch(_ server: ConveyServer, _ path: String, _ strategy: CacheStrategy) async throws -> ServerResponse<Data> {
    try await BenchTask(server: server, path: path, cacheStrategy: strategy).download()
}

/// URLs made up front: `URL(string:)` costs about a microsecond on Linux and is not the cache's cost.
let urls = (0..<100_000).map { URL(string: "https://bench.example/items/\($0)?page=\($0 % 10)") ?? URL(filePath: "/") }

func url(_ index: Int) -> URL { urls[index % urls.count] }

func entry(_ index: Int, body: Data) -> CachedResponse {
    CachedResponse(url: url(index), headers: ["Cache-Control": "max-age=3600", "ETag": "\"\(index)\"", "Content-Type": "application/json"], body: body)
}

func printSection(_ title: String) { print("\n## \(title)") }

/// The whole run, off the main actor: closures made here run where they are called, so a
/// measured operation never hops to the main thread.
@concurrent
func runBenchmarks() async throws {
    let arguments = CommandLine.arguments
    let quick = arguments.contains("--quick")
    /// `--only network|coalescing|hits|writes|scale` runs one section.
    let only = arguments.firstIndex(of: "--only").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
    func runs(_ section: String) -> Bool { only == nil || only == section }
    let scale = quick ? 10 : 1
    let bigCount = quick ? 10_000 : 100_000
    let body10k = Data((0..<10_240).map { UInt8($0 % 251) })
    let body1k = Data(body10k.prefix(1024))
    let scratch = FileManager.default.temporaryDirectory.appending(path: "convey-cache-bench-\(ProcessInfo.processInfo.processIdentifier)")
    defer { try? FileManager.default.removeItem(at: scratch) }

    print("# CacheBench (\(quick ? "quick" : "full") run, \(ProcessInfo.processInfo.activeProcessorCount) cores)")

    // MARK: Network baseline and revalidation, against nginx
    if !runs("network") {
    } else if let nginxText = ProcessInfo.processInfo.environment["CONVEY_NGINX_URL"], let nginxURL = URL(string: nginxText) {
        printSection("Loopback nginx, through the Convey pipeline (10k.json, 10,240 bytes)")
        let remote = Remote(name: "nginx", url: nginxURL)
        let plain = await makeServer(remote: remote, cache: nil)
        let cached = await makeServer(remote: remote, cache: DataCache())
        let roundTrip = try await measure("network round trip (no cache)", count: 2000 / scale) { _ in
            _ = try await fetch(plain, "10k.json", .never)
        }
        print(roundTrip.line())
        let revalidation = try await measure("304 revalidation (stale entry, ETag)", count: 2000 / scale) { _ in
            let response = try await fetch(cached, "10k.json", .localFirst)
            guard response.cacheStatus == .revalidated || response.cacheStatus == .network else {
                throw UnexpectedCacheStatus(status: response.cacheStatus)
            }
        }
        print(revalidation.line())
        let freshCache = DataCache()
        let freshServer = await makeServer(remote: remote, cache: freshCache)
        let sample = try await fetch(freshServer, "10k.json", .skipLocal)
        await freshCache.store(CachedResponse(url: sample.request.url, headers: ["Cache-Control": "max-age=3600", "Content-Type": "application/json"], body: sample.data))
        let pipelineHit = try await measure("pipeline memory hit (fresh entry, task.download)", count: 20_000 / scale) { _ in
            _ = try await fetch(freshServer, "10k.json", .localFirst)
        }
        print(pipelineHit.line())
        let stub = await makeServer(remote: remote, cache: nil)
        await stub.setTransport(StubTransport { request in
            TransportResponse(url: request.request.url, headers: ["Content-Type": "application/json"], body: sample.data)
        })
        print(try await measure("reference: stub transport, no cache", count: 20_000 / scale) { _ in
            _ = try await fetch(stub, "10k.json", .never)
        }.line())
    } else {
        print("\n(CONVEY_NGINX_URL not set: network figures skipped; run scripts/bench-cache)")
    }

    // MARK: Coalescing, counted at nginx
    if !runs("coalescing") {
    } else if let nginxText = ProcessInfo.processInfo.environment["CONVEY_NGINX_URL"], let nginxURL = URL(string: nginxText),
              let logPath = ProcessInfo.processInfo.environment["CONVEY_NGINX_COUNTED_LOG"] {
        printSection("Request coalescing: 100 concurrent identical GETs (nginx /counted-1m/256k.json: no-store, 1 MB/s per request)")
        let remote = Remote(name: "nginx", url: nginxURL)
        for coalescing in [true, false] {
            let cache = DataCache()
            let server = await makeServer(remote: remote, cache: cache, coalescing: coalescing)
            let run = UUID().uuidString
            guard let target = URL(string: nginxText + "/counted-1m/256k.json?run=" + run) else { continue }
            let clock = ContinuousClock()
            let oneStart = clock.now
            _ = try await cache.data(from: target, server: server)
            let one = clock.now - oneStart
            let allStart = clock.now
            let statuses = try await withThrowingTaskGroup(of: CacheStatus.self) { group in
                for _ in 0..<100 { group.addTask { try await cache.data(from: target, server: server).cacheStatus } }
                return try await group.reduce(into: [CacheStatus]()) { $0.append($1) }
            }
            let all = clock.now - allStart
            let counted = try await countedRequests(marker: run, logPath: logPath, atLeast: coalescing ? 2 : 101)
            print(String(format: "%-44@ one GET %7.1f ms   100 concurrent %7.1f ms   requests at nginx %4d (joined %d)",
                         (coalescing ? "coalescing on (default)" : "coalescing off") as NSString, one.microseconds / 1000,
                         all.microseconds / 1000, counted - 1, statuses.filter { $0 == .joined }.count))
        }
    } else {
        print("\n(CONVEY_NGINX_COUNTED_LOG not set: coalescing figures skipped; run scripts/bench-cache)")
    }

    // MARK: Hits
    if runs("hits") {
    printSection("Hits through DataCache.response(for:)")
    let memoryCache = DataCache(memoryCostLimit: 256 << 20)
    for index in 0..<1000 { await memoryCache.store(entry(index, body: body10k)) }
    print(await measure("memory hit, 10 KB entry, 1k entries", count: 200_000 / scale, batch: 100) { index in
        _ = await memoryCache.response(for: url(index % 1000))
    }.line())

    let diskFolder = scratch.appending(path: "disk")
    let writer = try DataCache(folder: diskFolder, diskSizeLimit: 4 << 30, memoryCostLimit: 0)
    for index in 0..<1000 { await writer.store(entry(index, body: body10k)) }
    let diskReader = try DataCache(folder: diskFolder, diskSizeLimit: 4 << 30, memoryCostLimit: 0)
    print(await measure("disk hit, 10 KB entry, 1k files", count: 50_000 / scale, batch: 10) { index in
        _ = await diskReader.response(for: url(index % 1000))
    }.line())

    }

    // MARK: Writes
    if runs("writes") {
    printSection("Write throughput (store: memory + atomic disk write)")
    let writeFolder = scratch.appending(path: "writes")
    let writeCache = try DataCache(folder: writeFolder, diskSizeLimit: 4 << 30, memoryCostLimit: 64 << 20)
    let writes10k = await measure("store 10 KB entry (disk + memory)", count: 10_000 / scale, warmup: 0, batch: 10) { index in
        await writeCache.store(entry(index, body: body10k))
    }
    print(writes10k.line() + String(format: "   %.0f MB/s", writes10k.perSecond * 10_240 / 1_000_000))
    let memoryWrites = DataCache(memoryCostLimit: 64 << 20)
    print(await measure("store 10 KB entry (memory only)", count: 100_000 / scale, batch: 100) { index in
        await memoryWrites.store(entry(index % 5000, body: body10k))
    }.line())

    }

    // MARK: 100k entries
    if runs("scale") {
    printSection("At \(bigCount) entries (1 KB bodies)")
    let bigMemory = DataCache(memoryCostLimit: 1 << 30)
    for index in 0..<bigCount { await bigMemory.store(entry(index, body: body1k)) }
    print(await measure("memory hit among \(bigCount) entries", count: 200_000 / scale, batch: 100) { index in
        _ = await bigMemory.response(for: url((index &* 7919) % bigCount))
    }.line())
    print(await measure("memory hit, 1000 hot keys among \(bigCount)", count: 200_000 / scale, batch: 100) { index in
        _ = await bigMemory.response(for: url((index &* 7919) % 1000))
    }.line())
    let smallMemory = DataCache(memoryCostLimit: 1 << 30)
    for index in 0..<1000 { await smallMemory.store(entry(index, body: body1k)) }
    print(await measure("memory hit among 1000 entries (same run)", count: 200_000 / scale, batch: 100) { index in
        _ = await smallMemory.response(for: url((index &* 7919) % 1000))
    }.line())

    let bigFolder = scratch.appending(path: "big")
    let bigDisk = try DataCache(folder: bigFolder, diskSizeLimit: 4 << 30, memoryCostLimit: 0)
    let bigWrites = await measure("store 1 KB entry, filling to \(bigCount) files", count: bigCount, warmup: 0, batch: 100) { index in
        await bigDisk.store(entry(index, body: body1k))
    }
    print(bigWrites.line())
    print(await measure("disk hit among \(bigCount) files", count: 50_000 / scale, batch: 10) { index in
        _ = await bigDisk.response(for: url((index &* 7919) % bigCount))
    }.line())
    let smallFolder = scratch.appending(path: "small")
    let smallDisk = try DataCache(folder: smallFolder, diskSizeLimit: 4 << 30, memoryCostLimit: 0)
    for index in 0..<1000 { await smallDisk.store(entry(index, body: body1k)) }
    print(await measure("disk hit among 1000 files (same run)", count: 50_000 / scale, batch: 10) { index in
        _ = await smallDisk.response(for: url((index &* 7919) % 1000))
    }.line())
    let sweepClock = ContinuousClock()
    let sweepStart = sweepClock.now
    await bigDisk.trimDisk()
    print(String(format: "%-44@ %9.1f ms (background; scans every file)", "sweep of \(bigCount) files, nothing to evict" as NSString,
                 (sweepClock.now - sweepStart).microseconds / 1000))
    let statistics = await bigDisk.statistics
    print("disk size after filling: \(statistics.diskSize / 1_000_000) MB in \(bigCount) files; dropped entries: \(statistics.droppedDiskEntries)")
    }
}

try await runBenchmarks()

/// A revalidation that the cache answered some other way: the benchmark would measure the wrong thing.
struct UnexpectedCacheStatus: Error, CustomStringConvertible {
    let status: CacheStatus
    var description: String { "expected a 304 revalidation, the cache answered \(status.rawValue)" }
}
