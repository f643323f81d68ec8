// Convey's benchmark: the same workloads through raw URLSession, Convey on URLSession, Convey on
// CurlTransport and CurlTransport alone, alternating in one run against a loopback nginx; plus
// Convey over a stub transport, which measures the pipeline's own cost without a network, and,
// for small GETs, the ceiling: libcurl's multi interface driven from one thread by a C program.
//
//   scripts/bench                                   # builds in release, starts nginx, runs this
//   scripts/bench --workloads small --rounds 1      # one workload, one round
//   scripts/bench --smoke                           # tiny counts: checks the command still works
//   scripts/bench --workloads small --loops 1,2 --only loops:   # CurlTransport on 1 and on 2 event loops
//   scripts/bench --workloads small --in-flight 16,64           # only at 16 and 64 in flight
//
// Workloads: small GETs (1 KB) at 1, 16 and 64 in flight; a typed JSON decode of a 256 KB body
// with 64 in flight; a POST of a 10 KB JSON body with 16 in flight; small GETs over HTTPS from
// the test CA's nginx (CONVEY_TLS_CA_URL), over HTTP/2 and over HTTP/1.1 at 1, 16 and 64 in
// flight and with a new connection (a TLS handshake) for every request, through CurlTransport
// and the C loop only (URLSession on Linux cannot be told to trust the test CA); and a memory run.
// Prints, as medians and ranges over the rounds: requests per second, p50/p99 latency, CPU per
// request and context switches per request (getrusage: user + system time and voluntary +
// involuntary switches of the whole process), cores used (CPU time over wall time), the ratio to
// raw URLSession, and for small GETs each client's throughput and CPU against the C loop's
// within each round. With `--loops 1,2,...`, the small GETs also run through Convey on curl and
// CurlTransport alone with each number of event loops (`CurlTransport.Configuration.eventLoops`),
// in the same rounds, and each count's throughput and CPU are given against the first count's.
@_spi(Transport) import BenchSupport
@_spi(Transport) import Convey
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
    var rounds = 5
    var memoryRequests = 100_000
    var workloads = Set(Workload.Kind.allCases)
    /// Runs only the clients whose name contains this text (case-insensitive).
    var only: String?
    /// Event loop counts to compare CurlTransport at, on small GETs; none by default.
    var loops: [Int] = []
    /// Runs each workload only at these numbers in flight (those it has); all of them by default.
    var inFlight: Set<Int>?

    init(arguments: [String]) throws {
        var iterator = arguments.dropFirst().makeIterator()
        while let flag = iterator.next() {
            if flag == "--smoke" {
                (requests, rounds, memoryRequests) = (64, 1, 0)
                continue
            }
            guard let value = iterator.next() else { throw BenchError.usage("\(flag) needs a value") }
            switch flag {
            case "--requests": requests = try Self.positive(value, flag)
            case "--rounds": rounds = try Self.positive(value, flag)
            case "--memory": memoryRequests = try Self.count(value, flag)
            case "--only": only = value
            case "--loops": loops = try value.split(separator: ",").map { try Self.positive(String($0), flag) }
            case "--in-flight": inFlight = Set(try value.split(separator: ",").map { try Self.positive(String($0), flag) })
            case "--workloads":
                workloads = Set(try value.split(separator: ",").map { name in
                    guard let kind = Workload.Kind(rawValue: String(name)) else { throw BenchError.usage("unknown workload \(name)") }
                    return kind
                })
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
    case ceilingUnavailable(String)

    var description: String {
        switch self {
        case .usage(let text):
            "usage: convey-bench [--requests N] [--rounds N] [--memory N] [--workloads small,json,post,https2,https1,handshake,blocking] "
                + "[--only text] [--loops 1,2,...] [--in-flight 1,16,64] [--smoke]\n\(text)"
        case .badResponse(let text): "bad response: \(text)"
        case .ceilingUnavailable(let reason): "the C loop is not available: \(reason)"
        }
    }
}

/// What to measure: a request, at which concurrencies, through which clients.
struct Workload: Sendable {
    enum Kind: String, CaseIterable {
        case small, json, post
        /// 1 KB GETs over HTTPS: HTTP/2, HTTP/1.1, and HTTP/1.1 with a new connection each.
        case https2, https1, handshake
        /// 64 small GETs with a 100 ms idle timeout beside a blocking hook: run by `BlockingHookBench`, not as a `Workload`.
        case blocking
    }

    let kind: Kind
    let title: String
    let concurrencies: [Int]
    /// Requests per batch, as a fraction of `--requests` (large bodies take longer).
    let share: Double
    let clients: [Client]
}

/// An item of the 256 KB JSON file.
struct Item: Codable, Sendable {
    let id: Int
    let name: String
    let tags: [String]
    let score: Double
    let active: Bool
}

/// A GET through Convey, payload raw.
struct SmallGet: ServerTask {
    let server: ConveyServer
    var path: String { "1k.bin" }
}

/// A 1 KB GET that asks the server to close the connection after it: the next needs a new one.
struct ClosingGet: ServerTask {
    let server: ConveyServer
    var path: String { "1k.bin" }
    var headers: Headers { ["Connection": "close"] }
}

/// A GET through Convey, decoded as `[Item]` off the actor.
struct TypedGet: DownloadingTask {
    typealias DownloadPayload = [Item]
    let server: ConveyServer
    var path: String { "256k.json" }
}

/// A POST of a 10 KB JSON body.
struct JSONPost: JSONUploadingTask {
    let server: ConveyServer
    let uploadPayload: [Item]?
    var path: String { "upload-sink" }
    var method: HTTPMethod { .post }
}

@ConveyActor
func makeServer(_ remote: Remote, transport: BuiltInTransport, custom: (any ConveyTransport)? = nil,
                configure: (inout ServerConfiguration) -> Void = { _ in }) -> ConveyServer {
    var configuration = ServerConfiguration(defaultEchoStyle: .none, echoSink: { _ in })
    configuration.builtInTransport = transport
    configure(&configuration)
    let server = ConveyServer(remote: remote, configuration: configuration)
    if let custom { server.transport = custom }
    return server
}

/// The workloads, each with its clients: raw URLSession first, the baseline of the ratios to
/// URLSession; the C loop, when there is one, last among the small GETs' clients.
func makeWorkloads(base: URL, ceiling: URL?, tls: TLSServer?, loops: [Int]) async throws -> [Workload] {
    guard let smallURL = URL(string: base.absoluteString + "/1k.bin"), let jsonURL = URL(string: base.absoluteString + "/256k.json"),
          let sinkURL = URL(string: base.absoluteString + "/upload-sink") else { throw BenchError.usage("bad URL \(base)") }
    let remote = Remote(name: "nginx", url: base)

    let configuration = URLSessionConfiguration.default
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    let session = URLSession(configuration: configuration)
    let overURLSession = await makeServer(remote, transport: .urlSession)
    let overCurl = await makeServer(remote, transport: .curl)
    let curl = await overCurl.transport
    // Convey's own cost: the whole pipeline over a transport that answers at once with a
    // response fetched once from nginx.
    let (cannedData, cannedResponse) = try await session.data(from: smallURL)
    guard let cannedResponse = cannedResponse as? HTTPURLResponse else { throw BenchError.badResponse("not HTTP") }
    let canned = TransportResponse(response: cannedResponse, data: cannedData)
    let overStub = await makeServer(remote, transport: .urlSession, custom: CannedTransport(response: canned))
    let curlAvailable = BuiltInTransport.curl.isAvailable

    @Sendable func checked(_ response: URLResponse?, _ size: Int, expecting status: Int = 200) throws -> Int {
        let code = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard code == status else { throw BenchError.badResponse("status \(code)") }
        return size
    }

    var small = [
        Client.pooled("URLSession (raw)") {
            let (data, response) = try await session.data(from: smallURL)
            return try checked(response, data.count)
        },
        Client.pooled("Convey · URLSession") { try await SmallGet(server: overURLSession).download().data.count },
        Client.pooled("Convey · stub (no network)") { try await SmallGet(server: overStub).download().data.count },
    ]
    if curlAvailable {
        small.append(Client.pooled("Convey · curl") { try await SmallGet(server: overCurl).download().data.count })
        // The path of an app that calls from the actor: where `@ConveyActor` runs on the curl
        // thread, the one with the fewest hand-offs.
        small.append(Client.onConveyActor("Convey · curl, on @ConveyActor") { try await SmallGet(server: overCurl).download().data.count })
        small.append(Client.pooled("CurlTransport (raw)") {
            let response = try await curl.send(TransportRequest(request: OutgoingRequest(url: smallURL), timeout: .seconds(30)))
            guard response.head.statusCode == 200 else { throw BenchError.badResponse("status \(response.head.statusCode)") }
            return response.data.count
        })
        small += try await loopClients(remote: remote, url: smallURL, loops: loops)
    }
    if let ceiling { small.append(CurlCeiling.client(executable: ceiling, url: smallURL)) }

    var json = [
        Client.pooled("URLSession (raw)") {
            let (data, response) = try await session.data(from: jsonURL)
            _ = try checked(response, data.count)
            return try JSONDecoder().decode([Item].self, from: data).count
        },
        Client.pooled("Convey · URLSession") { try await TypedGet(server: overURLSession).download().payload.count },
    ]
    if curlAvailable {
        json.append(Client.pooled("Convey · curl") { try await TypedGet(server: overCurl).download().payload.count })
    }

    let items = (0..<80).map { Item(id: $0, name: "item \($0)", tags: ["a", "b", "c"], score: Double($0) * 1.5, active: $0 % 2 == 0) }
    var post = [
        Client.pooled("URLSession (raw)") {
            var request = URLRequest(url: sinkURL)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            let body = try JSONEncoder().encode(items)
            let (data, response) = try await session.upload(for: request, from: body)
            return try checked(response, data.count, expecting: 204)
        },
        Client.pooled("Convey · URLSession") { try await JSONPost(server: overURLSession, uploadPayload: items).download().data.count },
    ]
    if curlAvailable {
        post.append(Client.pooled("Convey · curl") { try await JSONPost(server: overCurl, uploadPayload: items).download().data.count })
    }

    var workloads = [
        Workload(kind: .small, title: "1 KB GET", concurrencies: [1, 16, 64], share: 1, clients: small),
        Workload(kind: .json, title: "256 KB JSON GET decoded into [Item]", concurrencies: [64], share: 0.1, clients: json),
        Workload(kind: .post, title: "POST of a 10 KB JSON body", concurrencies: [16], share: 0.5, clients: post),
    ]
    if curlAvailable, let tls { workloads += try await makeHTTPSWorkloads(tls, ceiling: ceiling) }
    return workloads
}

/// Small GETs through Convey on curl and CurlTransport alone, each on a transport with
/// `eventLoops` set to each of `loops`, otherwise configured as `BuiltInTransport.curl` makes it.
/// None where there is no `CurlTransport` (Apple platforms).
func loopClients(remote: Remote, url: URL, loops: [Int]) async throws -> [Client] {
    #if os(Linux) && canImport(CConveyCurlShim)
    var clients: [Client] = []
    for count in loops {
        let transport = CurlTransport(configuration: .init(eventLoops: count))
        let server = await makeServer(remote, transport: .curl, custom: transport)
        clients.append(Client.pooled(LoopComparison.conveyName(count)) { try await SmallGet(server: server).download().data.count })
        clients.append(Client.pooled(LoopComparison.rawName(count)) {
            let response = try await transport.send(TransportRequest(request: OutgoingRequest(url: url), timeout: .seconds(30)))
            guard response.head.statusCode == 200 else { throw BenchError.badResponse("status \(response.head.statusCode)") }
            return response.data.count
        })
    }
    return clients
    #else
    return []
    #endif
}

/// The names of the `--loops` clients, which the comparison table looks up.
enum LoopComparison {
    static func conveyName(_ loops: Int) -> String { "Convey · curl, loops: \(loops)" }
    static func rawName(_ loops: Int) -> String { "CurlTransport (raw), loops: \(loops)" }
}

/// The test CA's nginx (HTTP/2 and HTTP/1.1 over TLS 1.3) and the CA file that trusts it.
struct TLSServer {
    let base: URL
    let caFile: URL

    /// From `CONVEY_TLS_CA_URL` and `CONVEY_TLS_DIR`, which scripts/with-test-servers sets; `nil` without them.
    init?(environment: [String: String]) {
        guard let base = environment["CONVEY_TLS_CA_URL"].flatMap(URL.init(string:)),
              let folder = environment["CONVEY_TLS_DIR"], !folder.isEmpty else { return nil }
        self.base = base
        caFile = URL(filePath: folder).appending(path: "ca.crt")
    }
}

/// 1 KB GETs over HTTPS through Convey on curl, CurlTransport alone and the C loop, each
/// trusting only the test CA and asking for the same HTTP version.
func makeHTTPSWorkloads(_ tls: TLSServer, ceiling: URL?) async throws -> [Workload] {
    guard let url = URL(string: tls.base.absoluteString + "/1k.bin") else { throw BenchError.usage("bad URL \(tls.base)") }
    let remote = Remote(name: "nginx-tls", url: tls.base)
    let trust = TLSConfiguration(certificateAuthoritiesFile: tls.caFile, trustsSystemCertificateAuthorities: false)

    func clients(_ version: HTTPVersionPreference, closing: Bool) async -> [Client] {
        let server = await makeServer(remote, transport: .curl) {
            $0.tls = trust
            $0.httpVersion = version
        }
        let transport = await server.transport
        var request = OutgoingRequest(url: url)
        if closing { request.setValue("close", forHTTPHeaderField: "Connection") }
        var clients = [
            closing ? Client.pooled("Convey · curl") { try await ClosingGet(server: server).download().data.count }
                : Client.pooled("Convey · curl") { try await SmallGet(server: server).download().data.count },
            Client.pooled("CurlTransport (raw)") { [request] in
                let response = try await transport.send(TransportRequest(request: request, timeout: .seconds(30)))
                guard response.head.statusCode == 200 else { throw BenchError.badResponse("status \(response.head.statusCode)") }
                return response.data.count
            },
        ]
        if let ceiling {
            let http2 = version == .automatic
            var options = ["--cacert", tls.caFile.path(percentEncoded: false), http2 ? "--http2" : "--http1.1"]
            if closing { options.append("--close") }
            clients.append(CurlCeiling.client(executable: ceiling, url: url, options: options,
                                              connections: http2 ? CurlCeiling.streamsPerConnection : CurlCeiling.connections))
        }
        return clients
    }

    return [
        Workload(kind: .https2, title: "1 KB GET over HTTPS, HTTP/2", concurrencies: [1, 16, 64], share: 1,
                 clients: await clients(.automatic, closing: false)),
        Workload(kind: .https1, title: "1 KB GET over HTTPS, HTTP/1.1", concurrencies: [1, 16, 64], share: 1,
                 clients: await clients(.http1_1, closing: false)),
        Workload(kind: .handshake, title: "1 KB GET over HTTPS, HTTP/1.1, a new connection and TLS handshake each",
                 concurrencies: [1, 16], share: 0.1, clients: await clients(.http1_1, closing: true)),
    ]
}

func run() async throws {
    let settings = try Settings(arguments: CommandLine.arguments)
    let environment = ProcessInfo.processInfo.environment
    guard let base = environment["CONVEY_NGINX_URL"].flatMap(URL.init(string:)) else {
        throw BenchError.usage("CONVEY_NGINX_URL is not set: run through scripts/bench")
    }
    var ceiling: URL?
    switch CurlCeiling.executable(environment: environment) {
    case .success(let executable): ceiling = executable
    case .failure(let reason): print("Note: the ceiling is skipped: \(reason)")
    }
    // The C loop is the reference of the small GETs' ratios, so `--only` keeps it.
    let tls = TLSServer(environment: environment)
    if tls == nil { print("Note: the HTTPS workloads are skipped: CONVEY_TLS_CA_URL and CONVEY_TLS_DIR are not set") }
    let workloads = try await makeWorkloads(base: base, ceiling: ceiling, tls: tls, loops: settings.loops)
        .filter { settings.workloads.contains($0.kind) }
        .map { workload in
            Workload(kind: workload.kind, title: workload.title,
                     concurrencies: workload.concurrencies.filter { settings.inFlight?.contains($0) ?? true }, share: workload.share,
                     clients: workload.clients.filter { client in
                         client.name == CurlCeiling.clientName || settings.only.map { client.name.localizedCaseInsensitiveContains($0) } ?? true
                     })
        }
        .filter { $0.clients.contains { $0.name != CurlCeiling.clientName } && !$0.concurrencies.isEmpty }
    let runsBlockingHook = settings.workloads.contains(.blocking)
    guard !workloads.isEmpty || runsBlockingHook else { throw BenchError.usage("no workload or client left to run") }
    print("Convey benchmark against nginx at \(base), \(settings.rounds) rounds alternating clients, "
          + "\(ProcessInfo.processInfo.activeProcessorCount) cores")

    for workload in workloads {
        let requests = max(16, Int(Double(settings.requests) * workload.share))
        print("\n## \(workload.title): \(requests) requests per batch\n")
        for client in workload.clients { _ = try await client.runBatch(min(requests, 500), 4) }  // warm up
        var results = Results()
        for round in 1...settings.rounds {
            for concurrency in workload.concurrencies {
                for client in workload.clients {
                    let result = try await client.runBatch(requests, concurrency)
                    results.record(result, client: client.name, concurrency: concurrency)
                    print("  round \(round) · \(concurrency) in flight · \(client.name): \(format(result.requestsPerSecond)) req/s, "
                          + "\(format(result.cpuPerRequest, 1)) µs CPU/req"
                          + (result.loopCPUPerRequest.map { " (loop thread \(format($0, 1)))" } ?? "")
                          + ", \(format(result.contextSwitchesPerRequest, 2)) context switches/req"
                          + (result.allocationsPerRequest.map { ", \(format($0, 1)) allocations/req" } ?? ""))
                }
            }
        }
        results.printMedians(of: workload, rounds: settings.rounds)
        if workload.clients.contains(where: { $0.name == CurlCeiling.clientName }) {
            results.printRatiosToCeiling(of: workload)
            results.printThreadSplit(of: workload)
        }
        if settings.loops.count > 1, workload.kind == .small {
            results.printLoopRatios(of: workload, loops: settings.loops)
        }
    }

    if runsBlockingHook {
        try await BlockingHookBench.run(base: base, requests: max(BlockingHookBench.concurrency, settings.requests), rounds: settings.rounds)
    }

    if settings.memoryRequests > 0, let small = workloads.first(where: { $0.kind == .small }) {
        try await runMemory(of: small.clients.filter(\.inProcess), requests: settings.memoryRequests)
    }
    print("\nPeak RSS: \(format(ProcessFigures.peakResidentMB, 1)) MB")
}

/// Resident memory of this process over `requests` small GETs per client, sampled at each tenth.
func runMemory(of clients: [Client], requests: Int) async throws {
    // Flat: under 1 MiB from the first tenth to the end (about 10 bytes per request over 100k).
    let flatLimitMB = 1.0
    print("\n## Memory over \(requests) small GETs per client (16 in flight), resident MB at each tenth\n")
    print("Flat means under \(format(flatLimitMB, 0)) MiB of growth from the first tenth to the end.\n")
    print("| client | start | end | growth | bytes/request | flat | resident MB after each tenth |")
    print("|---|---|---|---|---|---|---|")
    for client in clients {
        let tenth = max(1, requests / 10)
        var samples = [ProcessFigures.residentMB]
        for _ in 0..<10 {
            _ = try await client.runBatch(tenth, 16)
            samples.append(ProcessFigures.residentMB)
        }
        // Growth from the first tenth on: the first batch also fills pools and caches.
        let growth = (samples.last ?? 0) - samples[1]
        print("| \(client.name) | \(format(samples[1], 1)) | \(format(samples.last ?? 0, 1)) | \(format(growth, 1)) MB | "
              + "\(format(growth * 1_048_576 / Double(tenth * 9))) | \(growth < flatLimitMB ? "flat" : "grows") | "
              + "\(samples.dropFirst().map { format($0, 1) }.joined(separator: " ")) |")
    }
}

do {
    try await run()
} catch {
    FileHandle.standardError.write(Data("convey-bench: \(error)\n".utf8))
    exit(1)
}
