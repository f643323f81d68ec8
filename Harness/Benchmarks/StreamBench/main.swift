// StreamBench: small server-sent events through Convey's events reader (events/s, CPU per event,
// resident memory while it runs). Start it with scripts/bench-stream (release build, the local
// event server on a free port).
//
//   StreamBench            paced 10,000 events/s for 10 s, 1,000,000 unpaced, 200,000 over loopback
//   StreamBench --quick    2 s paced, 100,000 unpaced, 20,000 over loopback
//   StreamBench --smoke    tiny counts, for the test suite
import BenchSupport
@_spi(Transport) import Convey
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport that is an event server in the same process: `count` small events, at
/// `eventsPerSecond` or as fast as the reader takes them, honouring the sink's back-pressure.
struct GeneratedEvents: ConveyTransport {
    let count: Int
    let eventsPerSecond: Int?

    func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        let url = request.request.url
        try sink.receive(ResponseHead(statusCode: 200, fields: ["Content-Type": "text/event-stream"], url: url))
        let started = ContinuousClock.now
        // Paced: a batch every 10 ms; unpaced: batches of about 4 KB.
        let batchSize = eventsPerSecond.map { max(1, $0 / 100) } ?? 64
        var batch = Data()
        var sent = 0
        while sent < count {
            let end = min(sent + batchSize, count)
            for n in (sent + 1)...end {
                batch.append(contentsOf: "id: \(n)\nevent: tick\ndata: {\"n\":\(n),\"price\":101.25}\n\n".utf8)
            }
            sent = end
            try await offer(batch, to: sink)
            batch.removeAll(keepingCapacity: true)
            if let eventsPerSecond {
                try await Task.sleep(until: started + .seconds(Double(sent) / Double(eventsPerSecond)), clock: .continuous)
            }
        }
        return ExchangeMetrics()
    }

    private func offer(_ data: Data, to sink: any ResponseBodySink) async throws {
        while try !data.withUnsafeBytes({ try sink.offer($0) }) {
            await withCheckedContinuation { continuation in sink.whenReady { continuation.resume() } }
            try Task.checkCancellation()
        }
    }
}

struct EventFeed: ServerTask {
    let server: ConveyServer
    let path: String
    var queryParameters: [String: String]?
    var echoStyle: TaskEchoStyle { .none }
}

/// An event's data: the in-process producer sends a price, the event server padding.
struct Tick: Decodable {
    let n: Int
    let price: Double?
}

/// One workload's figures.
struct Figures {
    let name: String
    let events: Int
    let seconds: Double
    let cpuMicroseconds: Double
    let memory: (peak: Double, end: Double)

    var row: String {
        String(format: "| %@ | %d | %.2f | %.0f | %.2f | %.1f | %.1f |", name, events, seconds, Double(events) / seconds,
               cpuMicroseconds / Double(max(events, 1)), memory.peak, memory.end)
    }
}

/// Reads every event of `task` through `events()`, decoding each one's JSON.
func readAll(_ name: String, _ task: EventFeed, expected: Int) async throws -> Figures {
    let memory = MemoryWatch()
    let cpu = ProcessFigures.cpuMicroseconds
    let started = ContinuousClock.now
    var received = 0
    var lastNumber = 0
    for try await event in task.events(reconnects: false) {
        let tick = try event.decoded(as: Tick.self)
        guard tick.n == lastNumber + 1 else { throw BenchFailure("event \(tick.n) arrived after \(lastNumber)") }
        lastNumber = tick.n
        received += 1
    }
    let elapsed = started.duration(to: .now)
    guard received == expected else { throw BenchFailure("\(name): \(received) events of \(expected)") }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return Figures(name: name, events: received, seconds: seconds, cpuMicroseconds: ProcessFigures.cpuMicroseconds - cpu,
                   memory: memory.stop())
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A server reading `url` through `transport`, or through a built-in transport the server makes
/// when `nil`, as an app's server does: curl on Linux (URLSessionTransport there refuses streams:
/// it cannot hold them to a bound), URLSession elsewhere.
@ConveyActor
func server(_ transport: (any ConveyTransport)?, url: URL, stepAndTracing: Bool = false) -> ConveyServer {
    var configuration = ServerConfiguration(defaultEchoStyle: .none)
    configuration.builtInTransport = loopbackTransport
    if stepAndTracing { configuration.passThroughStepAndTracing() }
    let server = ConveyServer(remote: Remote(name: "bench", url: url), configuration: configuration)
    if let transport { server.transport = transport }
    return server
}

/// The transport the loopback rows read through.
nonisolated var loopbackTransport: BuiltInTransport {
    #if os(Linux)
    .curl
    #else
    .urlSession
    #endif
}

let arguments = CommandLine.arguments.dropFirst()
let smoke = arguments.contains("--smoke")
let quick = arguments.contains("--quick")
let pacedSeconds = smoke ? 0.3 : quick ? 2.0 : 10.0
let unpacedCount = smoke ? 5_000 : quick ? 100_000 : 1_000_000
let loopbackCount = smoke ? 2_000 : quick ? 20_000 : 200_000
// The in-process producer answers any URL; this one never resolves.
guard let local = URL(string: "http://in-process.invalid") else { exit(1) }

do {
    print("# StreamBench: server-sent events through DownloadingTask.events()")
    print("")
    print("Each event is ~60 bytes (`id`, `event`, one JSON `data` line), decoded into a struct as it is read.")
    print("Memory: resident growth above the start of the workload, at its peak and at its end.")
    print("")
    print("| workload | events | seconds | events/s | CPU µs/event | peak growth MB | end growth MB |")
    print("|---|---|---|---|---|---|---|")
    let pacedCount = Int(pacedSeconds * 10_000)
    let paced = await server(GeneratedEvents(count: pacedCount, eventsPerSecond: 10_000), url: local)
    print(try await readAll("in-process, paced at 10,000/s", EventFeed(server: paced, path: "paced"), expected: pacedCount).row)
    let unpaced = await server(GeneratedEvents(count: unpacedCount, eventsPerSecond: nil), url: local)
    print(try await readAll("in-process, as fast as read", EventFeed(server: unpaced, path: "unpaced"), expected: unpacedCount).row)
    if let events = ProcessInfo.processInfo.environment["CONVEY_EVENTS_URL"].flatMap(URL.init(string:)) {
        let name = loopbackTransport == .curl ? "curl" : "URLSession"
        let feed = EventFeed(server: await server(nil, url: events), path: "events", queryParameters: ["count": String(loopbackCount)])
        print(try await readAll("event-server.py over loopback, \(name)", feed, expected: loopbackCount).row)
        let traced = EventFeed(server: await server(nil, url: events, stepAndTracing: true), path: "events",
                               queryParameters: ["count": String(loopbackCount)])
        print(try await readAll("the same, an exchange step and tracing on", traced, expected: loopbackCount).row)
    } else {
        print("")
        print("(CONVEY_EVENTS_URL is not set: run scripts/bench-stream for the loopback rows)")
    }
} catch {
    FileHandle.standardError.write(Data("StreamBench failed: \(error)\n".utf8))
    exit(1)
}
