#if canImport(CConveyCurlShim)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Convey

/// The process's curl event loop on its own: transfers started and cancelled from many threads at
/// once, cancellations racing completions, pauses and resumes from other threads. Each test ends
/// by asking the loop how many of the test's transfers it still holds: none may be left behind.
///
/// The loop lives as long as the process (every transport shares it), so there is no
/// shutdown to test; what must hold instead is that it lets go of every transfer.
@Suite("Curl event loop", .wire, .serialized)
struct CurlEventLoopTests {
    @Test(.timeLimit(.minutes(1)))
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

    @Test(.timeLimit(.minutes(1)))
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

    @Test(.timeLimit(.minutes(1)))
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

    @Test(.timeLimit(.minutes(1)))
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
