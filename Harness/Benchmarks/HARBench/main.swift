// HAR figures (not a test): exporting recorded exchanges (time and peak memory, at two counts, to
// show memory does not grow with the count) and replaying small GETs from a HAR file beside
// StubTransport. No network and no server: a stub answers what is recorded.
//
//   scripts/bench-har [--records 10000] [--rounds 3]
import BenchSupport
@_spi(Transport) import Convey
import Foundation

/// A small GET answered with about 1 KB of JSON.
struct SmallGet: ServerTask {
    let server: ConveyServer
    var id = 1
    var path: String { "items/\(id)" }
    var queryParameters: [String: String]? { ["page": "2"] }
}

/// About 1 KB of JSON, as an API answers a small GET.
let smallBody = Data(("[" + (0..<20).map { #"{"id":\#($0),"name":"item \#($0)","ok":true}"# }.joined(separator: ",") + "]").utf8)

func option(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let number = Int(arguments[index + 1]) else { return value }
    return number
}

/// The stub server's remote.
let benchRemote = Remote(name: "bench", string: "https://bench.example")

@ConveyActor
func stubServer(configure: (inout ServerConfiguration) -> Void = { _ in }) -> ConveyServer {
    var configuration = ServerConfiguration(defaultEchoStyle: [])
    configure(&configuration)
    let server = ConveyServer(remote: benchRemote, configuration: configuration)
    server.transport = StubTransport { request in
        TransportResponse(url: request.request.url, statusCode: 200, headers: ["Content-Type": "application/json"], body: smallBody)
    }
    return server
}

/// Writes `count` records of small GETs (bodies kept) into `folder`.
@ConveyActor
func record(_ count: Int, into folder: URL) async throws -> TaskRecorder {
    let recorder = TaskRecorder(folder: folder, maxCount: count, bodyLimit: 4096)
    let server = stubServer { $0.defaultEchoStyle = [.recorded]; $0.recorder = recorder }
    for index in 0..<count {
        try await SmallGet(server: server, id: index).send()
        // The recorder drops records beyond its backlog: let it catch up.
        if index % 500 == 499 { await recorder.flush() }
    }
    await recorder.flush()
    return recorder
}

/// Exports records at each count; returns the largest export and its entry count.
@ConveyActor
func exportFigures(counts: [Int], folder: URL) async throws -> (file: URL, entries: Int) {
    print("Export: records of small GETs (1 KB bodies kept) written as one HAR file")
    var last = (file: folder, entries: 0)
    for count in counts {
        let recorder = try await record(count, into: folder.appending(path: "records-\(count)"))
        let file = folder.appending(path: "export-\(count).har")
        let idle = ProcessFigures.statusMiB("VmRSS")
        let resettable = ProcessFigures.resetPeak()
        let clock = ContinuousClock.now
        let written = try await recorder.exportHAR(to: file)
        let seconds = clock.duration(to: .now).seconds
        let peak = ProcessFigures.statusMiB("VmHWM")
        let size = (try FileManager.default.attributesOfItem(atPath: file.path(percentEncoded: false))[.size] as? NSNumber)?.doubleValue ?? 0
        print(String(format: "  %6d records → %6d entries, %.1f MB: %.2f s (%.0f entries/s), peak RSS %.1f MiB, %.1f MiB above idle%@",
                     count, written, size / 1e6, seconds, Double(written) / seconds, peak, peak - idle,
                     resettable ? "" : " (peak since start: clear_refs not writable)"))
        last = (file, written)
    }
    return last
}

/// Sequential small GETs through the whole pipeline, ids 0..<count: requests per second and CPU per request.
@ConveyActor
func throughput(count: Int, server: ConveyServer, scope: @ConveyActor (@ConveyActor () async throws -> Void) async throws -> Void) async throws -> (rate: Double, cpu: Double) {
    let cpu = ProcessFigures.cpuMicroseconds
    let clock = ContinuousClock.now
    try await scope {
        for index in 0..<count { try await SmallGet(server: server, id: index).send() }
    }
    let seconds = clock.duration(to: .now).seconds
    return (Double(count) / seconds, (ProcessFigures.cpuMicroseconds - cpu) / Double(count))
}

/// The same requests answered by a StubTransport and by the HAR file the export wrote (each
/// entry answers once, so each round reads the file afresh, outside the measured time).
@ConveyActor
func replayFigures(file: URL, entries: Int, rounds: Int) async throws {
    let server = stubServer()
    print("Replay: \(entries) sequential small GETs (\(entries) different URLs) through the whole pipeline, \(rounds) rounds (median)")
    var stub: [(rate: Double, cpu: Double)] = []
    var replay: [(rate: Double, cpu: Double)] = []
    var loading: [Double] = []
    for _ in 0..<rounds {
        stub.append(try await throughput(count: entries, server: server) { try await $0() })
        let clock = ContinuousClock.now
        let fixtures = try HARFixtures(file: file)
        loading.append(clock.duration(to: .now).seconds)
        replay.append(try await throughput(count: entries, server: server) { body in try await fixtures.scope { try await body() } })
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    for (label, measured) in [("StubTransport", stub), ("HARFixtures (replay)", replay)] {
        print("  " + label.padding(toLength: 24, withPad: " ", startingAt: 0)
              + String(format: "%8.0f req/s   %6.1f µs CPU per request", median(measured.map(\.rate)), median(measured.map(\.cpu))))
    }
    print(String(format: "  reading the %d-entry file: %.2f s", entries, median(loading)))
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

let folder = FileManager.default.temporaryDirectory.appending(path: "convey-har-bench-\(UUID().uuidString)")
do {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let records = option("--records", default: 10_000)
    let exported = try await exportFigures(counts: [records / 10, records], folder: folder)
    try await replayFigures(file: exported.file, entries: exported.entries, rounds: option("--rounds", default: 3))
} catch {
    print("HAR benchmark failed: \(error)")
    exit(1)
}
