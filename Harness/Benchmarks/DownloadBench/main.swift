// Downloads a large file from the local nginx to a file, with Convey on each transport and with
// `curl -o /dev/null`, interleaved in rounds: throughput of each and Convey's peak resident memory
// above idle. Not a test: figures.
//
//   scripts/bench-download [size in MiB, default 2048] [rounds, default 3]
//
// The file is sparse (nginx reads zeros from the page cache), and Convey writes it to
// CONVEY_BENCH_DOWNLOAD_DIR (default /dev/shm where it exists), so that the figures compare the
// clients rather than the disk. `curl -o /dev/null` writes nothing at all; `curl -o FILE` writes
// to the same folder as Convey.
import BenchSupport
@_spi(Transport) import Convey
import Foundation

struct LargeFile: DownloadingTask {
    let server: ConveyServer
    let name: String
    var path: String { name }
    var echoStyle: TaskEchoStyle { .none }
}

enum BenchError: Error, CustomStringConvertible {
    case setup(String)
    var description: String { switch self { case .setup(let reason): reason } }
}

@ConveyActor
func server(_ transport: BuiltInTransport, remote: Remote, stepAndTracing: Bool = false) -> ConveyServer {
    var configuration = ServerConfiguration()
    configuration.builtInTransport = transport
    configuration.defaultEchoStyle = .none
    if stepAndTracing { configuration.passThroughStepAndTracing() }
    return ConveyServer(remote: remote, configuration: configuration)
}

/// Seconds `curl -s -o output` takes for `url`.
func curlSeconds(_ url: URL, output: String) throws -> Double {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "-f", "-o", output, url.absoluteString]
    let start = ContinuousClock.now
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw BenchError.setup("curl exited with \(process.terminationStatus)") }
    return start.duration(to: .now).seconds
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

@ConveyActor
func run() async throws {
    let arguments = CommandLine.arguments.dropFirst()
    let sizeMiB = arguments.first.flatMap(Int.init) ?? 2048
    let rounds = arguments.dropFirst().first.flatMap(Int.init) ?? 3
    let environment = ProcessInfo.processInfo.environment
    guard let base = environment["CONVEY_NGINX_URL"].flatMap(URL.init(string:)), let root = environment["CONVEY_NGINX_ROOT"] else {
    throw BenchError.setup("run through scripts/bench-download (it starts nginx)")
    }
    let name = "bench-\(sizeMiB)m.bin"
    let source = URL(fileURLWithPath: root).appending(path: name)
    guard FileManager.default.createFile(atPath: source.path, contents: nil) else { throw BenchError.setup("cannot create \(source.path)") }
    let handle = try FileHandle(forWritingTo: source)
    try handle.truncate(atOffset: UInt64(sizeMiB) << 20)
    try handle.close()
    defer { try? FileManager.default.removeItem(at: source) }

    let folder = URL(fileURLWithPath: environment["CONVEY_BENCH_DOWNLOAD_DIR"]
    ?? (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()))
    .appending(path: "convey-download-bench-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }

    let remote = Remote(name: "nginx", url: base)
    var clients: [(name: String, server: ConveyServer)] = [("Convey · URLSession", server(.urlSession, remote: remote))]
    if BuiltInTransport.curl.isAvailable {
        clients.insert(("Convey · curl", server(.curl, remote: remote)), at: 0)
        clients.insert(("Convey · curl, an exchange step, tracing", server(.curl, remote: remote, stepAndTracing: true)), at: 1)
    }
    // Warm up each transport with a small request, so idle memory includes its set-up.
    for client in clients { _ = try await LargeFile(server: client.server, name: "hello.txt").download() }
    let url = base.appending(path: name)
    let bytes = Double(sizeMiB) * 1_048_576

    print("Downloading \(sizeMiB) MiB from nginx to \(folder.path), \(rounds) interleaved rounds\n")
    var throughput: [String: [Double]] = [:]
    var peaks: [String: [Double]] = [:]
    var ratios: [String: [Double]] = [:]
    var fileRatios: [String: [Double]] = [:]
    for round in 1...rounds {
        let curl = bytes / 1_048_576 / (try curlSeconds(url, output: "/dev/null"))
        throughput["curl -o /dev/null", default: []].append(curl)
        let curlFile = folder.appending(path: "curl.bin")
        let curlToFile = bytes / 1_048_576 / (try curlSeconds(url, output: curlFile.path))
        try FileManager.default.removeItem(at: curlFile)
        throughput["curl -o FILE", default: []].append(curlToFile)
        for client in clients {
            let destination = folder.appending(path: "download.bin")
            let idle = ProcessFigures.statusMiB("VmRSS")
            ProcessFigures.resetPeak()
            let start = ContinuousClock.now
            let response = try await LargeFile(server: client.server, name: name).download(to: destination, resuming: false)
            let seconds = start.duration(to: .now).seconds
            let size = (try FileManager.default.attributesOfItem(atPath: response.payload.path)[.size] as? NSNumber)?.doubleValue ?? 0
            guard size == bytes else { throw BenchError.setup("\(client.name) wrote \(size) bytes, expected \(bytes)") }
            try FileManager.default.removeItem(at: destination)
            let rate = bytes / 1_048_576 / seconds
            throughput[client.name, default: []].append(rate)
            peaks[client.name, default: []].append(ProcessFigures.statusMiB("VmHWM") - idle)
            ratios[client.name, default: []].append(rate / curl)
            fileRatios[client.name, default: []].append(rate / curlToFile)
        }
        print("round \(round): curl -o /dev/null \(String(format: "%.0f", curl)) MiB/s, -o FILE \(String(format: "%.0f", curlToFile)) MiB/s; "
              + clients.map { "\($0.name) \(String(format: "%.0f", throughput[$0.name]?.last ?? 0)) MiB/s, peak +\(String(format: "%.1f", peaks[$0.name]?.last ?? 0)) MiB" }
              .joined(separator: "; "))
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    func range(_ values: [Double], _ format: String) -> String {
        "\(String(format: format, median(values))) (\(String(format: format, values.min() ?? 0))–\(String(format: format, values.max() ?? 0)))"
    }
    print("\n| client | MiB/s, median (range) | × curl -o /dev/null, per round | × curl -o FILE, per round | peak RSS above idle, MiB |")
    print("|---|---|---|---|---|")
    print("| curl -o /dev/null | \(range(throughput["curl -o /dev/null"] ?? [0], "%.0f")) | 1 | – | – |")
    print("| curl -o FILE | \(range(throughput["curl -o FILE"] ?? [0], "%.0f")) | – | 1 | – |")
    for client in clients {
        print("| \(client.name) | \(range(throughput[client.name] ?? [0], "%.0f")) | \(range(ratios[client.name] ?? [0], "%.2f")) | "
              + "\(range(fileRatios[client.name] ?? [0], "%.2f")) | \(range(peaks[client.name] ?? [0], "%.1f")) |")
    }
}

try await run()
