// Tracing figures (not a test; see Docs/performance.md#tracing), on the local servers that
// scripts/bench-tracing starts:
// - per small GET (nginx's 1k.bin, sequential, Convey on its default transport), CPU and calls to
//   the C allocator with tracing off, with the trace context only, with spans exported in
//   batches to the collector stand-in, with metrics on, and with metrics and spans on (the same
//   OTLP exporter); the modes interleaved round by round, medians and ranges, each against off;
// - the exporter's spans per second into the collector stand-in;
// - resident memory over 100,000 traced requests with the collector down (goal: flat).
//
//   scripts/bench-tracing [--requests 4000] [--rounds 5] [--memory 100000] [--spans 200000]
import BenchSupport
@_spi(Transport) import Convey
import Foundation

struct SmallGet: ServerTask {
    let server: ConveyServer
    var path: String { "1k.bin" }
}

func option(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let number = Int(arguments[index + 1]) else { return value }
    return number
}

enum BenchError: Error { case missing(String) }

func environmentURL(_ name: String) throws -> URL {
    guard let text = ProcessInfo.processInfo.environment[name], let url = URL(string: text) else {
        throw BenchError.missing("\(name) is not set: run scripts/bench-tracing, which starts the local servers")
    }
    return url
}

/// How a server traces its runs.
enum Mode: String, CaseIterable {
    case off = "tracing off"
    /// The seam's own share: a step of the app's around the run and one around each exchange,
    /// doing nothing, the two placements tracing's steps take.
    case noOpSteps = "no-op steps (the seam alone)"
    case context = "trace context only"
    case exported = "spans exported (OTLP, batches)"
    /// Issue 42's figures: OpenTelemetry's HTTP client metrics, to the same OTLP exporter.
    case metrics = "metrics on (OTLP)"
    case metricsAndSpans = "metrics and spans (OTLP)"
}

@ConveyActor
func server(_ mode: Mode, nginx: URL, exporter: OTLPExporter) -> ConveyServer {
    var configuration = ServerConfiguration(defaultEchoStyle: [])
    switch mode {
    case .off: break
    case .noOpSteps:
        configuration.interceptors = [PassingOn()]
        configuration.exchangeInterceptors = [PassingOn()]
    case .context: configuration.tracing = TracingConfiguration()
    case .exported: configuration.tracing = TracingConfiguration(exporter: exporter)
    case .metrics: configuration.metrics = MetricsConfiguration(exporter: exporter)
    case .metricsAndSpans:
        configuration.metrics = MetricsConfiguration(exporter: exporter)
        configuration.tracing = TracingConfiguration(exporter: exporter)
    }
    return ConveyServer(remote: Remote(name: "nginx", url: nginx), configuration: configuration)
}

/// `count` sequential small GETs: CPU µs and allocations per request.
@ConveyActor
func measure(_ server: ConveyServer, count: Int) async throws -> (cpu: Double, allocations: Double?) {
    try await perRunFigures(count: count) { try await SmallGet(server: server).send() }
}

@ConveyActor
func perRequestFigures(nginx: URL, collector: URL, requests: Int, rounds: Int) async throws {
    let exporter = OTLPExporter(collector: collector.appending(path: "count/bench-runs"), serviceName: "tracing-bench", batchInterval: .seconds(1))
    let servers = Mode.allCases.map { ($0, server($0, nginx: nginx, exporter: exporter)) }
    // Warm-up: connections, caches of the allocator and the pipeline.
    for (_, server) in servers { _ = try await measure(server, count: 500) }
    var cpu: [Mode: [Double]] = [:]
    var allocations: [Mode: [Double]] = [:]
    for _ in 0..<rounds {
        for (mode, server) in servers {
            let measured = try await measure(server, count: requests)
            cpu[mode, default: []].append(measured.cpu)
            if let counted = measured.allocations { allocations[mode, default: []].append(counted) }
        }
    }
    await exporter.flush()
    print("Per small GET (nginx 1k.bin, sequential, \(rounds) rounds of \(requests) requests, interleaved; median (range)):")
    let offCPU = cpu[.off] ?? []
    for mode in Mode.allCases {
        let ratios = zip(cpu[mode] ?? [], offCPU).map { $0 / $1 }
        var line = "  " + mode.rawValue.padding(toLength: 32, withPad: " ", startingAt: 0)
            + "CPU µs/req " + medianAndRange(cpu[mode] ?? []) + "   ×off " + medianAndRange(ratios, digits: 2)
        if mode != .off { line += "  Δ " + medianAndRange(zip(cpu[mode] ?? [], offCPU).map { $0 - $1 }) }
        if let counted = allocations[mode] {
            line += "   allocations/req " + medianAndRange(counted)
            if mode != .off { line += "  Δ " + medianAndRange(zip(counted, allocations[.off] ?? []).map { $0 - $1 }) }
        }
        print(line)
    }
    print("  exporter: \(exporter.deliveredSpans) spans delivered, \(exporter.droppedSpans) dropped")
}

/// Spans per second through the exporter into the collector stand-in (counting only).
@ConveyActor
func exporterThroughput(collector: URL, spans: Int) async throws {
    let source = Capture()
    let server = ConveyServer(remote: Remote(name: "stub", string: "https://stub.example"),
                              configuration: { var configuration = ServerConfiguration(defaultEchoStyle: [])
                                               configuration.tracing = TracingConfiguration(exporter: source)
                                               return configuration }())
    server.transport = StubTransport { request in TransportResponse(url: request.request.url, statusCode: 200, headers: [:], body: Data()) }
    // Real spans from real runs, then exported again and again.
    for _ in 0..<256 { try await SmallGet(server: server).send() }
    let sample = source.spans
    let exporter = OTLPExporter(collector: collector.appending(path: "count/bench-throughput"), serviceName: "tracing-bench",
                                maximumQueueSize: 4096, batchInterval: .seconds(3600))
    let cpu = ProcessFigures.cpuMicroseconds
    let clock = ContinuousClock.now
    var offered = 0
    while offered < spans {
        exporter.export(sample)
        offered += sample.count
        if exporter.queuedSpans > 2048 { await exporter.flush() }
    }
    await exporter.flush()
    let seconds = clock.duration(to: .now).seconds
    let spent = (ProcessFigures.cpuMicroseconds - cpu) / Double(exporter.deliveredSpans)
    print(String(format: "Exporter: %d spans offered, %d delivered in batches of up to 512, %d dropped: %.0f spans/s, %.2f µs CPU per span in this process (the collector's parsing runs in its own)",
                 offered, exporter.deliveredSpans, exporter.droppedSpans, Double(exporter.deliveredSpans) / seconds, spent))
}

/// Resident memory every tenth of `count` traced requests, the collector down.
@ConveyActor
func memoryWithCollectorDown(nginx: URL, count: Int) async throws {
    // A port nothing listens on: every export is refused, retried, then dropped.
    let exporter = OTLPExporter(collector: URL(string: "http://127.0.0.1:9")!, serviceName: "tracing-bench")
    var configuration = ServerConfiguration(defaultEchoStyle: [])
    configuration.tracing = TracingConfiguration(exporter: exporter)
    let server = ConveyServer(remote: Remote(name: "nginx", url: nginx), configuration: configuration)
    let step = max(1, count / 10)
    var samples: [String] = []
    for index in 1...count {
        try await SmallGet(server: server).send()
        if index % step == 0 { samples.append(String(format: "%.1f", ProcessFigures.residentMB)) }
    }
    print("Memory, \(count) traced small GETs with the collector down (resident MB every \(step)): " + samples.joined(separator: " "))
    print("  exporter: \(exporter.deliveredSpans) delivered, \(exporter.droppedSpans) dropped, \(exporter.queuedSpans) queued (bound 2048)")
    await exporter.shutdown()
}

/// Keeps the spans of the sample runs.
final class Capture: SpanExporter, @unchecked Sendable {  // guarded by: its NSLock
    // Guarded by `lock`.
    private let lock = NSLock()
    private var kept: [TraceSpan] = []

    func export(_ spans: [TraceSpan]) { lock.withLock { kept += spans } }

    var spans: [TraceSpan] { lock.withLock { kept } }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

do {
    let nginx = try environmentURL("CONVEY_NGINX_URL")
    let collector = try environmentURL("CONVEY_COLLECTOR_URL")
    try await perRequestFigures(nginx: nginx, collector: collector, requests: option("--requests", default: 4000), rounds: option("--rounds", default: 5))
    try await exporterThroughput(collector: collector, spans: option("--spans", default: 200_000))
    let memory = option("--memory", default: 100_000)
    if memory > 0 { try await memoryWithCollectorDown(nginx: nginx, count: memory) }
} catch {
    print("Tracing benchmark failed: \(error)")
    exit(1)
}
