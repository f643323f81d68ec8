// WebSocketBench: 1 KB text messages echoed by the `websockets` package's server over loopback
// (messages/s, CPU per message, resident memory), with permessage-deflate as the server
// negotiates it. Start it with scripts/bench-websocket (release build, the local WebSocket server
// on a free port), which then runs scripts/ws-bench-client.py, a client on the same `websockets`
// package, with the same workloads, as a reference.
//
//   WebSocketBench            20,000 at 1 in flight, 200,000 at 64, 1,000,000 at 64 for memory
//   WebSocketBench --quick    2,000, 20,000 and 100,000
//   WebSocketBench --smoke    tiny counts, for the test suite
import BenchSupport
@_spi(Transport) import Convey
import Foundation

/// The echo route, over the curl transport: URLSession on Linux carries no WebSocket.
struct EchoSocket: WebSocketTask {
    let server: ConveyServer
    var path: String { "echo" }
    var echoStyle: TaskEchoStyle { .none }
}

/// Message `number`: its number in 8 digits, then text up to 1,024 bytes, as the Python client sends.
func message(_ number: Int) -> String {
    let digits = String(number)
    return String(repeating: "0", count: max(0, 8 - digits.count)) + digits + filler
}

let filler = String(String(repeating: "Convey echoes WebSocket messages over loopback; ", count: 30).prefix(1016))

/// One workload's figures.
struct Figures {
    let name: String
    let messages: Int
    let seconds: Double
    let cpuMicroseconds: Double
    let memory: (peak: Double, end: Double)

    var row: String {
        String(format: "| Convey (curl) | %@ | %d | %.2f | %.0f | %.1f | %.1f | %.1f |", name, messages, seconds, Double(messages) / seconds,
               cpuMicroseconds / Double(max(messages, 1)), memory.peak, memory.end)
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Echoes `count` messages with at most `inFlight` sent and not yet back, checking each echo.
func echo(_ count: Int, inFlight: Int, over connection: WebSocketConnection, name: String) async throws -> Figures {
    let memory = MemoryWatch()
    let cpu = ProcessFigures.cpuMicroseconds
    let started = ContinuousClock.now
    var messages = connection.messages.makeAsyncIterator()
    var sent = 0
    var received = 0
    while sent < min(inFlight, count) {
        try await connection.send(message(sent))
        sent += 1
    }
    while received < count {
        guard case .text(let text)? = try await messages.next() else { throw BenchFailure("\(name): the connection ended after \(received)") }
        guard text.utf8.count == 1024, Int(text.prefix(8)) == received else { throw BenchFailure("\(name): echo \(received) was wrong") }
        received += 1
        if sent < count {
            try await connection.send(message(sent))
            sent += 1
        }
    }
    let elapsed = started.duration(to: .now)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return Figures(name: name, messages: count, seconds: seconds, cpuMicroseconds: ProcessFigures.cpuMicroseconds - cpu, memory: memory.stop())
}

#if os(Linux) && canImport(CConveyCurlShim)
/// A server on `remote` over a curl transport of its own.
@ConveyActor
func curlServer(_ remote: Remote) -> ConveyServer {
    let server = ConveyServer(remote: remote, configuration: ServerConfiguration(defaultEchoStyle: .none))
    server.transport = CurlTransport()
    return server
}
#endif

let arguments = CommandLine.arguments.dropFirst()
let smoke = arguments.contains("--smoke")
let quick = arguments.contains("--quick")
let oneInFlight = smoke ? 200 : quick ? 2_000 : 20_000
let manyInFlight = smoke ? 2_000 : quick ? 20_000 : 200_000
let memoryRun = smoke ? 5_000 : quick ? 100_000 : 1_000_000

#if os(Linux) && canImport(CConveyCurlShim)
do {
    guard let base = ProcessInfo.processInfo.environment["CONVEY_WS_URL"],
          let remote = Remote(name: "bench", string: base.replacingOccurrences(of: "ws://", with: "http://")) else {
        throw BenchFailure("CONVEY_WS_URL is not set: run scripts/bench-websocket")
    }
    let server = await curlServer(remote)
    print("# WebSocketBench: 1 KB text messages echoed by scripts/ws-echo-server.py (websockets) over loopback")
    print("")
    print("Both clients offer permessage-deflate, which the server takes (12-bit windows, contexts kept). CPU is the")
    print("client process's own (user + system); memory its resident growth above the start of the workload.")
    print("")
    print("| client | workload | messages | seconds | messages/s | CPU µs/message | peak growth MB | end growth MB |")
    print("|---|---|---|---|---|---|---|---|")
    for (name, count, inFlight) in [("1 in flight", oneInFlight, 1), ("64 in flight", manyInFlight, 64),
                                     ("64 in flight, memory", memoryRun, 64)] {
        let connection = try await EchoSocket(server: server).connect()
        print(try await echo(count, inFlight: inFlight, over: connection, name: name).row)
        try await connection.close()
    }
} catch {
    FileHandle.standardError.write(Data("WebSocketBench failed: \(error)\n".utf8))
    exit(1)
}
#else
FileHandle.standardError.write(Data("WebSocketBench runs on Linux, over CurlTransport: URLSessionTransport carries no WebSocket\n".utf8))
exit(1)
#endif
