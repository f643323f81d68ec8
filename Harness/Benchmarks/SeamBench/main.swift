// What the seam costs (not a test; see Docs/performance.md#the-seam), with scripts/bench-seam:
// per run, CPU and calls to the C allocator for a stubbed run (no network: the pipeline alone)
// and a small GET from the local nginx, on a server with nothing of the seam, with one no-op
// step around the run, one around each exchange, one no-op observer, and all three; the modes
// interleaved round by round, medians and ranges.
//
//   scripts/bench-seam [--requests 8000] [--rounds 5]
@_spi(Transport) import BenchSupport
@_spi(Transport) import Convey
import Foundation

struct Small: ServerTask {
    let server: ConveyServer
    var path: String { "1k.bin" }
}

/// An observer that looks at nothing.
struct Ignoring: RunObserver {
    func observe(_ event: RunEvent) async throws {}
}

enum Mode: String, CaseIterable {
    case plain = "nothing of the seam"
    case runStep = "a no-op step around the run"
    case exchangeStep = "a no-op step around each exchange"
    case observer = "a no-op observer"
    case all = "all three"
}

func option(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let number = Int(arguments[index + 1]) else { return value }
    return number
}

@ConveyActor
func server(_ mode: Mode, remote: Remote, stubbed: Bool) -> ConveyServer {
    var configuration = ServerConfiguration(defaultEchoStyle: [])
    switch mode {
    case .plain: break
    case .runStep: configuration.interceptors = [PassingOn()]
    case .exchangeStep: configuration.exchangeInterceptors = [PassingOn()]
    case .observer: configuration.observers = [Ignoring()]
    case .all:
        configuration.interceptors = [PassingOn()]
        configuration.exchangeInterceptors = [PassingOn()]
        configuration.observers = [Ignoring()]
    }
    let server = ConveyServer(remote: remote, configuration: configuration)
    if stubbed {
        let body = Data(repeating: 0x61, count: 1024)
        server.transport = CannedTransport(response: TransportResponse(url: remote.url, body: body))
    }
    return server
}

/// `count` sequential runs: CPU µs and allocations per run.
func measure(_ server: ConveyServer, count: Int) async throws -> (cpu: Double, allocations: Double?) {
    try await perRunFigures(count: count) { try await Small(server: server).send() }
}

func figures(_ title: String, remote: Remote, stubbed: Bool, requests: Int, rounds: Int) async throws {
    let servers = await Mode.allCases.asyncMap { ($0, await server($0, remote: remote, stubbed: stubbed)) }
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
    print("\(title) (sequential, \(rounds) rounds of \(requests), interleaved; median (range)):")
    let plainCPU = cpu[.plain] ?? []
    let plainAllocations = allocations[.plain] ?? []
    for mode in Mode.allCases {
        var line = "  " + mode.rawValue.padding(toLength: 36, withPad: " ", startingAt: 0) + "CPU µs/run " + medianAndRange(cpu[mode] ?? [])
        if mode != .plain { line += "  +" + medianAndRange(zip(cpu[mode] ?? [], plainCPU).map { $0 - $1 }) }
        if let counted = allocations[mode] {
            line += "   allocations/run " + medianAndRange(counted)
            if mode != .plain { line += "  +" + medianAndRange(zip(counted, plainAllocations).map { $0 - $1 }) }
        }
        print(line)
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async -> T) async -> [T] {
        var results: [T] = []
        for element in self { results.append(await transform(element)) }
        return results
    }
}

/// Marks the start and the end of the one GET `scripts/bench-frames` counts the functions of: a
/// debugger breaks on these names.
/// (Each does something of its own, so that the optimizer cannot fold the two into one.)
@_silgen_name("convey_frames_begin") @inline(never) @_optimize(none) func framesBegin(_ mark: Int) -> Int { mark + 1 }
@_silgen_name("convey_frames_end") @inline(never) @_optimize(none) func framesEnd(_ mark: Int) -> Int { mark + 2 }

/// `--one-get`: warmed up, one small GET from nginx between the two marks, for `scripts/bench-frames`.
func oneGet() async throws {
    guard let text = ProcessInfo.processInfo.environment["CONVEY_NGINX_URL"], let nginx = URL(string: text) else { return }
    let server = await server(.plain, remote: Remote(name: "nginx", url: nginx), stubbed: false)
    for _ in 0..<200 { try await Small(server: server).send() }
    _ = framesBegin(0)
    try await Small(server: server).send()
    _ = framesEnd(0)
}

let requests = option("--requests", default: 8000)
let rounds = option("--rounds", default: 5)
if CommandLine.arguments.contains("--one-get") {
    try await oneGet()
    exit(0)
}
do {
    guard let stub = Remote(name: "stub", string: "http://stub.invalid") else { throw CancellationError() }
    try await figures("A stubbed run", remote: stub, stubbed: true, requests: requests, rounds: rounds)
    if let text = ProcessInfo.processInfo.environment["CONVEY_NGINX_URL"], let nginx = URL(string: text) {
        try await figures("A small GET from nginx", remote: Remote(name: "nginx", url: nginx), stubbed: false,
                          requests: requests / 4, rounds: rounds)
    }
} catch {
    print("failed: \(error)")
    exit(1)
}
