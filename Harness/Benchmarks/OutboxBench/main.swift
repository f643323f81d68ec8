import BenchSupport
@_spi(Transport) import Convey
import Foundation

// The outbox's throughput and cost, run by scripts/bench-outbox (release build):
//
//   OutboxBench fill DIR BASE PATH N   enqueues N POSTs of 64 bytes to BASE+PATH (each durable before the next)
//   OutboxBench drain DIR              delivers every pending item in DIR, one after another
//   OutboxBench direct BASE PATH N     sends the same N POSTs without the outbox, one after another
//
// Each prints one JSON line: {"phase", "items", "seconds", "perSecond", "cpuMicrosecondsPerItem"},
// measured around the phase alone (start-up excluded).

struct Post: DataUploadingTask {
    let server: ConveyServer
    let path: String
    let index: Int
    var method: HTTPMethod { .post }
    var uploadPayload: Data? { Data(String(format: "%064d", index).utf8) }
    var echoStyle: TaskEchoStyle { .none }
}

@ConveyActor
func measure(_ phase: String, items: Int, _ work: () async throws -> Void) async throws {
    let cpu = ProcessFigures.cpuMicroseconds
    let start = ContinuousClock.now
    try await work()
    let seconds = (ContinuousClock.now - start) / .seconds(1)
    let spent = ProcessFigures.cpuMicroseconds - cpu
    let line: [String: Any] = ["phase": phase, "items": items, "seconds": seconds, "perSecond": Double(items) / seconds,
                               "cpuMicrosecondsPerItem": spent / Double(max(items, 1))]
    let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
}

@ConveyActor
func main() async throws {
    let arguments = Array(CommandLine.arguments.dropFirst())
    var configuration = ServerConfiguration(defaultEchoStyle: .none)
    configuration.defaultTimeout = .seconds(10)
    switch (arguments.first, arguments.count) {
    case ("fill", 5):
        guard let count = Int(arguments[4]), let remote = Remote(name: "bench", string: arguments[2]) else { break }
        let path = arguments[3]
        let server = ConveyServer(remote: remote, configuration: configuration)
        let outbox = try await Outbox(folder: URL(filePath: arguments[1]), server: server,
                                      configuration: Outbox.Configuration(maximumItems: 1_000_000, maximumBytes: 1 << 34))
        try await measure("fill", items: count) {
            for index in 0..<count { try await outbox.enqueue(Post(server: server, path: path, index: index)) }
        }
        return
    case ("drain", 2):
        let server = ConveyServer(remote: nil, configuration: configuration)
        let outbox = try await Outbox(folder: URL(filePath: arguments[1]), server: server,
                                      configuration: Outbox.Configuration(maximumItems: 1_000_000, maximumBytes: 1 << 34))
        let count = outbox.items.filter { !$0.isFinished }.count
        try await measure("drain", items: count) { try await outbox.deliverPending() }
        let failed = outbox.items.filter { if case .failed = $0.state { true } else { false } }.count
        if failed > 0 { FileHandle.standardError.write(Data("\(failed) items failed\n".utf8)) }
        return
    case ("direct", 4):
        guard let count = Int(arguments[3]), let remote = Remote(name: "bench", string: arguments[1]) else { break }
        let path = arguments[2]
        let server = ConveyServer(remote: remote, configuration: configuration)
        try await measure("direct", items: count) {
            for index in 0..<count { try await Post(server: server, path: path, index: index).send() }
        }
        return
    default:
        break
    }
    FileHandle.standardError.write(Data("usage: OutboxBench fill DIR BASE PATH N | drain DIR | direct BASE PATH N\n".utf8))
    exit(1)
}

try await main()
