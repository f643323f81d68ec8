#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The process's curl event loop on its own: transfers started and cancelled from many threads at
/// once, cancellations racing completions, pauses and resumes from other threads. Each test ends
/// by asking the loop how many of the test's transfers it still holds: none may be left behind.
///
/// The loop lives as long as the process (every transport shares it), so there is no
/// shutdown to test; what must hold instead is that it lets go of every transfer.
@Suite("Curl event loop", .wire, .serialized)
struct CurlEventLoopTests {
    @Test(.timeLimit(.minutes(5)))
    func eachLoopsThreadCarriesANameTheSystemShows() async throws {
        let transport = CurlTransport(configuration: .init(eventLoops: 2))
        let loops = transport.eventLoops.map(\.threadName) + [CurlEventLoop.shared.threadName]
        #expect(Set(loops).count == 3)
        // A loop names its thread as the thread starts.
        var names: [String] = []
        while !Set(loops).isSubset(of: names) {
            names = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap { task in
                try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        for name in loops {
            #expect(name.wholeMatch(of: /convey-loop-[0-9]+/) != nil, "\(name)")
            #expect(names.contains(name), "\(name) among \(names)")
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func transfersStartedFromManyThreadsAllCompleteAndLeaveNothingBehind() async throws {
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 4))
        let url = try TestServers.nginx("/1k.bin")
        let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<300 {
                // Some from @ConveyActor, most from the global pool's threads.
                let fromActor = index.isMultiple(of: 5)
                group.addTask { fromActor ? try await Self.sendOnActor(transport, url) : try await transport.send(url).data.count }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(sizes == Array(repeating: 1024, count: 300))
        #expect(await transport.transfersOnTheWire() == 0)
    }

    @ConveyActor
    private static func sendOnActor(_ transport: CurlTransport, _ url: URL) async throws -> Int {
        try await transport.send(url).data.count
    }

    @Test(.timeLimit(.minutes(5)))
    func cancellationsRacingCompletionsEndEveryTransferOnceEitherWay() async throws {
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 2))
        let url = try TestServers.nginx("/1k.bin")
        var generator = SystemRandomNumberGenerator()
        let tasks = (0..<300).map { _ in Task { try await transport.send(url) } }
        // Cancel each at a random moment: before it starts, while it waits for a connection, on
        // the wire, or after it finished.
        let yields = tasks.map { _ in Int.random(in: 0..<40, using: &generator) }
        await withTaskGroup(of: Void.self) { group in
            for (task, count) in zip(tasks, yields) {
                group.addTask {
                    for _ in 0..<count { await Task.yield() }
                    task.cancel()
                }
            }
        }
        var completed = 0
        var cancelled = 0
        for task in tasks {
            switch await task.result {
            case .success(let response):
                #expect(response.data.count == 1024)
                completed += 1
            case .failure(let error):
                #expect((error as? URLError)?.code == .cancelled, "\(error)")
                cancelled += 1
            }
        }
        #expect(completed + cancelled == 300)
        #expect(await transport.transfersOnTheWire() == 0)
        // The loop still works after the storm.
        #expect(try await transport.send(url).data.count == 1024)
    }

    @Test(.timeLimit(.minutes(5)))
    func aPausedTransferResumesFromAnotherThreadWithEveryByteInOrder() async throws {
        let transport = CurlTransport()
        let sink = StutteringSink(refuseEvery: 3)
        _ = try await transport.send(TransportRequest(request: OutgoingRequest(url: try TestServers.nginx("/16m.bin")), timeout: .seconds(30)),
                                     into: sink)
        #expect(sink.head?.statusCode == 200)
        #expect(sink.received == 16 << 20)
        #expect(sink.pauses > 0, "the sink refused bytes, so the transfer paused")
        #expect(sink.checksum == StutteringSink.checksum(ofFile: try #require(ProcessInfo.processInfo.environment["CONVEY_NGINX_ROOT"]) + "/16m.bin"))
        #expect(await transport.transfersOnTheWire() == 0)
    }

    @Test(.timeLimit(.minutes(5)))
    func cancellingAPausedTransferEndsIt() async throws {
        let transport = CurlTransport()
        let sink = StutteringSink(refuseEvery: 1, resumes: false)
        let request = TransportRequest(request: OutgoingRequest(url: try TestServers.nginx("/16m.bin")), timeout: .seconds(30))
        let send = Task { try await transport.send(request, into: sink) }
        try await waitUntil("the transfer paused") { sink.pauses > 0 }
        send.cancel()
        let failure = await send.result.failure
        #expect((failure as? URLError)?.code == .cancelled)
        #expect(await transport.transfersOnTheWire() == 0)
    }
}

/// A transport with event loops of its own: its transfers spread over them, its per-host limit
/// holds in total, and cancelling, pausing and resuming work on every loop.
@Suite("Curl event loops of a transport", .wire, .serialized)
struct CurlEventLoopGroupTests {
    @Test(.timeLimit(.minutes(5)))
    func manyConcurrentTransfersAllSucceedSpreadOverBothLoops() async throws {
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 8, eventLoops: 2))
        let url = try TestServers.nginx("/1k.bin")
        let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 { group.addTask { try await transport.send(url).data.count } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(sizes == Array(repeating: 1024, count: 200))
        let perLoop = transport.transfersStartedPerLoop
        #expect(perLoop.count == 2)
        #expect(perLoop.reduce(0, +) == 200)
        #expect(perLoop.allSatisfy { $0 > 0 }, "both loops ran transfers: \(perLoop)")
        #expect(await transport.transfersOnTheWire() == 0)
    }

    @Test(.timeLimit(.minutes(5)))
    func theConnectionLimitPerHostHoldsInTotalOverTheLoops() async throws {
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 2, eventLoops: 2))
        let url = try TestServers.nginx("/1k.bin")
        // nginx keeps connections open, so every connection the transport opened shows up as one
        // response that did not reuse a connection.
        let reused = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<64 { group.addTask { try await transport.send(url).metrics.reusedConnection ?? false } }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(reused.count == 64)
        #expect(reused.count { !$0 } <= 2, "connections opened: \(reused.count { !$0 })")
        #expect(transport.transfersStartedPerLoop.allSatisfy { $0 > 0 })
    }

    @Test(.timeLimit(.minutes(5)))
    func cancellingATransferOnTheSecondLoopEndsItAndLeavesTheFirstRunning() async throws {
        let transport = CurlTransport(configuration: .init(eventLoops: 2))
        let request = TransportRequest(request: OutgoingRequest(url: try TestServers.nginx("/16m.bin")), timeout: .seconds(30))
        let firstSink = StutteringSink(refuseEvery: 1, resumes: false)
        let first = Task { try await transport.send(request, into: firstSink) }
        try await waitUntil("the first transfer paused") { firstSink.pauses > 0 }
        let secondSink = StutteringSink(refuseEvery: 1, resumes: false)
        let second = Task { try await transport.send(request, into: secondSink) }
        try await waitUntil("the second transfer paused") { secondSink.pauses > 0 }
        // With one transfer on the first loop, the second loop has more room.
        #expect(transport.transfersStartedPerLoop == [1, 1])
        second.cancel()
        #expect((await second.result.failure as? URLError)?.code == .cancelled)
        #expect(await transport.transfersOnTheWire() == 1)
        first.cancel()
        #expect((await first.result.failure as? URLError)?.code == .cancelled)
        #expect(await transport.transfersOnTheWire() == 0)
    }

    @Test(.timeLimit(.minutes(5)))
    func pausedTransfersResumeOnBothLoopsWithEveryByteInOrder() async throws {
        let transport = CurlTransport(configuration: .init(eventLoops: 2))
        let request = TransportRequest(request: OutgoingRequest(url: try TestServers.nginx("/16m.bin")), timeout: .seconds(30))
        let sinks = [StutteringSink(refuseEvery: 3), StutteringSink(refuseEvery: 3)]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sink in sinks { group.addTask { _ = try await transport.send(request, into: sink) } }
            try await group.waitForAll()
        }
        let expected = StutteringSink.checksum(ofFile: try #require(ProcessInfo.processInfo.environment["CONVEY_NGINX_ROOT"]) + "/16m.bin")
        for sink in sinks {
            #expect(sink.received == 16 << 20)
            #expect(sink.pauses > 0)
            #expect(sink.checksum == expected)
        }
        #expect(transport.transfersStartedPerLoop == [1, 1])
    }

    @Test(.timeLimit(.minutes(5)))
    func anIdleTransferOnTheSecondLoopTimesOut() async throws {
        let transport = CurlTransport(configuration: .init(eventLoops: 2))
        let url = try TestServers.httpbin("/delay/2")
        let occupying = Task { try await transport.send(url, timeout: .seconds(30)) }
        try await waitUntil("the first transfer went to the first loop") { transport.transfersStartedPerLoop == [1, 0] }
        let error = await #expect(throws: URLError.self) { _ = try await transport.send(url, timeout: .milliseconds(300)) }
        #expect(error?.code == .timedOut)
        #expect(transport.transfersStartedPerLoop == [1, 1])
        occupying.cancel()
        _ = await occupying.result
    }

    @Test(.timeLimit(.minutes(5)))
    func aTransportsOwnLoopsStopWhenItIsReleased() async throws {
        var transport: CurlTransport? = CurlTransport(configuration: .init(eventLoops: 3))
        let loops = try #require(transport?.eventLoops)
        #expect(loops.count == 3)
        #expect(try await transport?.send(try TestServers.nginx("/1k.bin")).data.count == 1024)
        #expect(!loops.contains { $0.hasStopped })
        transport = nil
        try await waitUntil("every loop stopped") { loops.allSatisfy(\.hasStopped) }
        #expect(!CurlEventLoop.shared.hasStopped)
    }

    @Test func oneLoopIsTheSharedOneAndTheCountIsBounded() {
        #expect(CurlTransport().eventLoops.map(ObjectIdentifier.init) == [ObjectIdentifier(CurlEventLoop.shared)])
        #expect(CurlTransport(configuration: .init(eventLoops: 0)).eventLoops.count == 1)
        #expect(CurlTransport(configuration: .init(eventLoops: 1_000)).eventLoops.count == CurlTransport.maximumEventLoops)
    }
}

/// A sink that refuses every `refuseEvery`-th offer and asks to be resumed from a global-queue
/// thread, counting pauses and summing what it took, in order.
private final class StutteringSink: ResponseBodySink, @unchecked Sendable {
    private let lock = NSLock()
    private let refuseEvery: Int
    private let resumes: Bool
    private var offers = 0
    private var state = (received: 0, pauses: 0, checksum: UInt64(0))
    private var storedHead: ResponseHead?

    init(refuseEvery: Int, resumes: Bool = true) {
        self.refuseEvery = refuseEvery
        self.resumes = resumes
    }

    var head: ResponseHead? { lock.withLock { storedHead } }
    var received: Int { lock.withLock { state.received } }
    var pauses: Int { lock.withLock { state.pauses } }
    var checksum: UInt64 { lock.withLock { state.checksum } }

    func receive(_ head: ResponseHead) throws { lock.withLock { storedHead = head } }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        lock.withLock {
            offers += 1
            if offers.isMultiple(of: refuseEvery) {
                state.pauses += 1
                return false
            }
            state.received += bytes.count
            state.checksum = Self.fold(state.checksum, bytes)
            return true
        }
    }

    func whenReady(_ resume: @escaping @Sendable () -> Void) {
        guard resumes else { return }
        DispatchQueue.global().async {
            // The next offer is taken, whatever its number.
            self.lock.withLock { self.offers = 0 }
            resume()
        }
    }

    /// An order-sensitive checksum (FNV-1a over 64 bits).
    static func fold(_ start: UInt64, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash = start == 0 ? 0xcbf2_9ce4_8422_2325 : start
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    static func checksum(ofFile path: String) -> UInt64? {
        FileManager.default.contents(atPath: path).map { data in data.withUnsafeBytes { fold(0, $0) } }
    }
}
#endif
