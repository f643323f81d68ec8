// Convey's transport benchmark: 1 KB GETs from a loopback nginx through raw URLSession, Convey on
// URLSession, Convey on CurlTransport and CurlTransport alone, alternating in one run; plus Convey
// over a stub transport, which measures the pipeline's own cost without a network.
//
//   scripts/bench-transport                      # builds in release, starts nginx, runs this
//   scripts/bench-transport --requests 5000 --rounds 1 --memory 0
//
// Prints requests per second, p50/p99 latency, CPU per request (getrusage: user + system of
// this whole process), resident memory, and the ratios the issue sets goals for.
import Convey
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Command-line settings.
struct Settings {
    var requests = 20_000
    var rounds = 3
    var concurrencies = [1, 16]
    var memoryRequests = 100_000
    var path = "/1k.bin"
    /// Runs only the clients whose name contains this text (case-insensitive).
    var only: String?

    init(arguments: [String]) throws {
        var iterator = arguments.dropFirst().makeIterator()
        while let flag = iterator.next() {
            guard let value = iterator.next() else { throw BenchError.usage("\(flag) needs a value") }
            switch flag {
            case "--requests": requests = try Self.positive(value, flag)
            case "--rounds": rounds = try Self.positive(value, flag)
            case "--memory": memoryRequests = try Self.count(value, flag)
            case "--concurrency": concurrencies = try value.split(separator: ",").map { try Self.positive(String($0), flag) }
            case "--path": path = value
            case "--only": only = value
            default: throw BenchError.usage("unknown option \(flag)")
            }
        }
    }

    private static func count(_ text: String, _ flag: String) throws -> Int {
        guard let value = Int(text), value >= 0 else { throw BenchError.usage("\(flag) wants a number, got \(text)") }
        return value
    }

    private static func positive(_ text: String, _ flag: String) throws -> Int {
        let value = try count(text, flag)
        guard value > 0 else { throw BenchError.usage("\(flag) wants a positive number") }
        return value
    }
}

enum BenchError: Error, CustomStringConvertible {
    case usage(String)
    case badResponse(String)

    var description: String {
        switch self {
        case .usage(let text): "usage: transport-bench [--requests N] [--rounds N] [--concurrency 1,16] [--memory N] [--path /1k.bin] [--only text]\n\(text)"
        case .badResponse(let text): "bad response: \(text)"
        }
    }
}

/// One way of fetching the URL, returning the body size.
struct Client: Sendable {
    let name: String
    let fetch: @Sendable () async throws -> Int
}

/// The task every Convey client runs.
struct OneFile: ServerTask {
    let server: ConveyServer
    let path: String
}

/// What one measured batch gave.
struct Measurement {
    var requestsPerSecond: Double
    var p50: Double
    var p99: Double
    var cpuPerRequest: Double
}

enum Process {
    #if canImport(Glibc)
    private static let ownUsage = __rusage_who_t(RUSAGE_SELF.rawValue)
    #else
    private static let ownUsage = RUSAGE_SELF
    #endif

    /// User + system CPU time of the whole process, in microseconds.
    static var cpuMicroseconds: Double {
        var usage = rusage()
        getrusage(ownUsage, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    }

    /// Peak resident memory so far, in MB.
    static var peakResidentMB: Double {
        var usage = rusage()
        getrusage(ownUsage, &usage)
        return Double(usage.ru_maxrss) / 1024
    }

    /// Resident memory now, in MB (Linux: /proc/self/statm; elsewhere the peak).
    static var residentMB: Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let pages = text.split(separator: " ").dropFirst().first.flatMap({ Double($0) }) else { return peakResidentMB }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }
}

/// Runs `requests` fetches with `concurrency` in flight; latencies in microseconds.
func measure(_ client: Client, requests: Int, concurrency: Int) async throws -> Measurement {
    let perWorker = max(1, requests / concurrency)
    let cpuBefore = Process.cpuMicroseconds
    let started = ContinuousClock.now
    let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                var latencies: [Double] = []
                latencies.reserveCapacity(perWorker)
                for _ in 0..<perWorker {
                    let sent = ContinuousClock.now
                    _ = try await client.fetch()
                    let elapsed = sent.duration(to: .now).components
                    latencies.append(Double(elapsed.seconds) * 1e6 + Double(elapsed.attoseconds) / 1e12)
                }
                return latencies
            }
        }
        return try await group.reduce(into: [Double]()) { $0 += $1 }.sorted()
    }
    let wall = started.duration(to: .now).components
    let seconds = Double(wall.seconds) + Double(wall.attoseconds) / 1e18
    let cpu = Process.cpuMicroseconds - cpuBefore
    return Measurement(requestsPerSecond: Double(latencies.count) / seconds,
                       p50: latencies[latencies.count / 2],
                       p99: latencies[min(latencies.count - 1, latencies.count * 99 / 100)],
                       cpuPerRequest: cpu / Double(latencies.count))
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func format(_ value: Double, _ digits: Int = 0) -> String {
    String(format: "%.\(digits)f", value)
}

@ConveyActor
func makeServer(_ remote: Remote, transport: BuiltInTransport, custom: (any ConveyTransport)? = nil) -> ConveyServer {
    var configuration = ServerConfiguration(defaultEchoStyle: .none, echoSink: ClosureEchoSink { _ in })
    configuration.builtInTransport = transport
    let server = ConveyServer(remote: remote, configuration: configuration)
    if let custom { server.transport = custom }
    return server
}

func makeClients(base: URL, path: String) async throws -> [Client] {
    guard let url = URL(string: base.absoluteString + path) else { throw BenchError.usage("bad URL \(base)\(path)") }
    let remote = Remote(name: "nginx", url: base)
    let taskPath = String(path.drop(while: { $0 == "/" }))

    let configuration = URLSessionConfiguration.default
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    let session = URLSession(configuration: configuration)
    let overURLSession = await makeServer(remote, transport: .urlSession)
    let overCurl = await makeServer(remote, transport: .curl)
    let curl = await overCurl.transport
    // Convey's own cost: the whole pipeline over a transport that answers at once with a
    // response fetched once from nginx.
    let (cannedData, cannedResponse) = try await session.data(from: url)
    guard let cannedResponse = cannedResponse as? HTTPURLResponse else { throw BenchError.badResponse("not HTTP") }
    let canned = TransportResponse(response: cannedResponse, data: cannedData)
    let overStub = await makeServer(remote, transport: .urlSession, custom: StubTransport { _ in canned })

    @Sendable func checked(_ status: Int, _ size: Int) throws -> Int {
        guard status == 200 else { throw BenchError.badResponse("status \(status) from \(url)") }
        return size
    }
    var clients = [
        Client(name: "URLSession (raw)") {
            let (data, response) = try await session.data(from: url)
            return try checked((response as? HTTPURLResponse)?.statusCode ?? 0, data.count)
        },
        Client(name: "Convey · URLSession") { try await OneFile(server: overURLSession, path: taskPath).download().data.count },
        Client(name: "Convey · stub (no network)") { try await OneFile(server: overStub, path: taskPath).download().data.count },
    ]
    if BuiltInTransport.curl.isAvailable {
        clients.append(Client(name: "Convey · curl") { try await OneFile(server: overCurl, path: taskPath).download().data.count })
        clients.append(Client(name: "CurlTransport (raw)") {
            let response = try await curl.send(TransportRequest(urlRequest: URLRequest(url: url), timeout: .seconds(30)))
            return try checked(response.response.statusCode, response.data.count)
        })
    }
    return clients
}

func run() async throws {
    let settings = try Settings(arguments: CommandLine.arguments)
    guard let base = ProcessInfo.processInfo.environment["CONVEY_NGINX_URL"].flatMap(URL.init(string:)) else {
        throw BenchError.usage("CONVEY_NGINX_URL is not set: run through scripts/bench-transport")
    }
    let clients = try await makeClients(base: base, path: settings.path)
        .filter { client in settings.only.map { client.name.localizedCaseInsensitiveContains($0) } ?? true }
    guard !clients.isEmpty else { throw BenchError.usage("no client matches --only \(settings.only ?? "")") }
    print("Transport benchmark: GET \(base)\(settings.path), \(settings.requests) requests per batch, "
          + "\(settings.rounds) rounds alternating clients, \(ProcessInfo.processInfo.activeProcessorCount) cores")

    for client in clients { _ = try await measure(client, requests: 1_000, concurrency: 4) }  // warm up

    var results: [String: [Int: [Measurement]]] = [:]
    for round in 1...settings.rounds {
        for concurrency in settings.concurrencies {
            for client in clients {
                let result = try await measure(client, requests: settings.requests, concurrency: concurrency)
                results[client.name, default: [:]][concurrency, default: []].append(result)
                print("  round \(round) · \(concurrency) in flight · \(client.name): \(format(result.requestsPerSecond)) req/s, "
                      + "\(format(result.cpuPerRequest, 1)) µs CPU/req")
            }
        }
    }

    print("\nMedians of \(settings.rounds) rounds:\n")
    print("| client | in flight | req/s | p50 µs | p99 µs | CPU µs/req |")
    print("|---|---|---|---|---|---|")
    for concurrency in settings.concurrencies {
        for client in clients {
            let batches = results[client.name]?[concurrency] ?? []
            print("| \(client.name) | \(concurrency) | \(format(median(batches.map(\.requestsPerSecond)))) | "
                  + "\(format(median(batches.map(\.p50)))) | \(format(median(batches.map(\.p99)))) | "
                  + "\(format(median(batches.map(\.cpuPerRequest)), 1)) |")
        }
    }
    func throughput(_ name: String, _ concurrency: Int) -> Double? {
        results[name]?[concurrency].map { median($0.map(\.requestsPerSecond)) }
    }
    print("")
    for concurrency in settings.concurrencies {
        if let curl = throughput("Convey · curl", concurrency), let urlSession = throughput("Convey · URLSession", concurrency),
           let raw = throughput("URLSession (raw)", concurrency) {
            print("\(concurrency) in flight: Convey · curl = \(format(curl / urlSession, 1))× Convey · URLSession, "
                  + "\(format(curl / raw, 1))× raw URLSession; Convey · URLSession = \(format(urlSession / raw * 100))% of raw URLSession")
        }
    }

    guard settings.memoryRequests > 0 else {
        print("\nPeak RSS: \(format(Process.peakResidentMB, 1)) MB")
        return
    }
    print("\nMemory over \(settings.memoryRequests) requests per client (16 in flight), resident MB at each tenth:\n")
    print("| client | start | end | growth | bytes/request | resident MB after each tenth |")
    print("|---|---|---|---|---|---|")
    for client in clients {
        let tenth = max(1, settings.memoryRequests / 10)
        var samples = [Process.residentMB]
        for _ in 0..<10 {
            _ = try await measure(client, requests: tenth, concurrency: 16)
            samples.append(Process.residentMB)
        }
        // Growth from the first tenth on: the first batch also fills pools and caches.
        let growth = (samples.last ?? 0) - samples[1]
        print("| \(client.name) | \(format(samples[1], 1)) | \(format(samples.last ?? 0, 1)) | \(format(growth, 1)) MB | "
              + "\(format(growth * 1_048_576 / Double(tenth * 9))) | \(samples.dropFirst().map { format($0, 1) }.joined(separator: " ")) |")
    }
    print("\nPeak RSS: \(format(Process.peakResidentMB, 1)) MB")
}

do {
    try await run()
} catch {
    FileHandle.standardError.write(Data("transport-bench: \(error)\n".utf8))
    exit(1)
}
