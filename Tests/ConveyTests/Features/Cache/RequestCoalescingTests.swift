import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Identical GET and HEAD requests in flight share one exchange; the stub origin counts what
/// reaches it and holds its answers until every caller has joined.
@Suite("Request coalescing")
@ConveyActor
struct RequestCoalescingTests {
    private let gate = Gate()
    /// Requests that reached the transport, before the gate.
    private let arrivals = EventLog()

    /// An origin that answers after the gate opens, counting requests.
    private func gatedOrigin() -> StubOrigin {
        StubOrigin { _, number in (200, ["Cache-Control": "no-store"], "shared \(number)") }
    }

    private func gatedTransport(_ origin: StubOrigin) -> StubTransport {
        let inner = origin.transport
        return StubTransport { [gate, arrivals] request in
            arrivals.add(request.request.method.rawValue)
            try await gate.wait()
            return try await inner.send(TransportRequest(request: request.request, timeout: request.timeout))
        }
    }

    private func server(_ origin: StubOrigin, echo: EchoCapture = EchoCapture(),
                        configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> (ConveyServer, DataCache) {
        let cache = DataCache()
        let server = try stubServer(gatedTransport(origin)) {
            $0.cache = cache
            $0.echoSink = echo.sink
            $0.defaultEchoStyle = .consoleMinimum
            configure(&$0)
        }
        return (server, cache)
    }

    private func startGets(_ count: Int, server: ConveyServer, method: HTTPMethod = .get,
                           configuration: TaskConfiguration? = nil) -> [Task<ServerResponse<Data>, any Error>] {
        (0..<count).map { _ in
            Task { @ConveyActor in
                try await CacheProbeTask(server: server, path: "shared", method: method, taskConfiguration: configuration).download()
            }
        }
    }

    @Test func identicalGetsInFlightPutOneRequestOnTheWireAndEveryoneGetsTheAnswer() async throws {
        let origin = gatedOrigin()
        let echo = EchoCapture()
        let (server, cache) = try server(origin, echo: echo)
        let tasks = startGets(20, server: server)
        try await waitUntil("20 callers wait") { cache.coalescer.waitingCount == 20 }
        gate.open()
        var statuses: [CacheStatus] = []
        for task in tasks {
            let response = try await task.value
            #expect(response.stringResult == "shared 1")
            #expect(response.statusCode == 200)
            statuses.append(response.cacheStatus)
        }
        #expect(origin.count == 1)
        #expect(statuses.filter { $0 == .network }.count == 1)
        #expect(statuses.filter { $0 == .joined }.count == 19)
        #expect(echo.text.components(separatedBy: "cache joined").count == 20)
    }

    @Test func recordingsShowTheSharedExchangeOnceAndEachWaiterAsJoined() async throws {
        try await withTemporaryFolder { folder in
            let recorder = TaskRecorder(folder: folder)
            let origin = gatedOrigin()
            let (server, cache) = try server(origin) {
                $0.recorder = recorder
                $0.defaultEchoStyle = .recorded
            }
            let tasks = startGets(3, server: server)
            try await waitUntil("3 callers wait") { cache.coalescer.waitingCount == 3 }
            gate.open()
            for task in tasks { _ = try await task.value }
            await recorder.flush()
            let statuses = await recorder.records().map(\.cacheStatus)
            #expect(statuses.count == 3)
            #expect(statuses.filter { $0 == nil }.count == 1)
            #expect(statuses.filter { $0 == .joined }.count == 2)
        }
    }

    @Test func cancellingOneWaiterLeavesTheExchangeToTheOthers() async throws {
        let origin = gatedOrigin()
        let (server, cache) = try server(origin)
        let tasks = startGets(3, server: server)
        try await waitUntil("3 callers wait") { cache.coalescer.waitingCount == 3 }
        tasks[0].cancel()
        await #expect(throws: ConveyError.self) { try await tasks[0].value }
        try await waitUntil("the cancelled caller left") { cache.coalescer.waitingCount == 2 }
        gate.open()
        #expect(try await tasks[1].value.stringResult == "shared 1")
        #expect(try await tasks[2].value.stringResult == "shared 1")
        #expect(origin.count == 1)
    }

    @Test func cancellingEveryWaiterCancelsTheExchange() async throws {
        let origin = gatedOrigin()
        let (server, cache) = try server(origin)
        let tasks = startGets(2, server: server)
        try await waitUntil("2 callers wait") { cache.coalescer.waitingCount == 2 }
        for task in tasks { task.cancel() }
        for task in tasks { await #expect(throws: ConveyError.self) { try await task.value } }
        await cache.coalescer.waitUntilIdle()
        gate.open()
        #expect(origin.count == 0)
        // The next request starts afresh instead of joining the cancelled exchange.
        let next = try await CacheProbeTask(server: server, path: "shared").download()
        #expect(next.cacheStatus == .network)
        #expect(origin.count == 1)
    }

    @Test func aFailureReachesEveryWaiter() async throws {
        let origin = StubOrigin { _, _ in throw URLError(.cannotConnectToHost) }
        let (server, cache) = try server(origin)
        let tasks = startGets(4, server: server)
        try await waitUntil("4 callers wait") { cache.coalescer.waitingCount == 4 }
        gate.open()
        for task in tasks { await #expect(throws: ConveyError.self) { try await task.value } }
        #expect(origin.count == 1)
    }

    @Test func aTaskCanTurnCoalescingOff() async throws {
        let origin = gatedOrigin()
        let (server, _) = try server(origin)
        let tasks = startGets(3, server: server, configuration: TaskConfiguration(coalescesRequests: false))
        try await waitUntil("3 requests reach the transport") { arrivals.events.count == 3 }
        gate.open()
        for task in tasks { #expect(try await task.value.cacheStatus == .network) }
        #expect(origin.count == 3)
    }

    @Test func aServerCanTurnCoalescingOff() async throws {
        let origin = gatedOrigin()
        let (server, _) = try server(origin) { $0.coalescesRequests = false }
        let tasks = startGets(3, server: server)
        try await waitUntil("3 requests reach the transport") { arrivals.events.count == 3 }
        gate.open()
        for task in tasks { #expect(try await task.value.cacheStatus == .network) }
        #expect(origin.count == 3)
    }

    @Test func requestsWithABodyAreNeverCoalesced() async throws {
        let origin = gatedOrigin()
        let (server, _) = try server(origin)
        gate.open()
        let tasks = startGets(3, server: server, method: .post)
        for task in tasks { #expect(try await task.value.cacheStatus == .network) }
        #expect(origin.count == 3)
    }

    @Test func headRequestsCoalesceApartFromGets() async throws {
        let origin = gatedOrigin()
        let (server, cache) = try server(origin)
        let heads = startGets(3, server: server, method: .head)
        let gets = startGets(3, server: server)
        try await waitUntil("6 callers wait") { cache.coalescer.waitingCount == 6 }
        gate.open()
        for task in heads + gets { _ = try await task.value }
        #expect(origin.count == 2)
    }

    @Test func eachCallersSizeLimitHoldsBecauseDifferentLimitsNeverJoin() async throws {
        let origin = StubOrigin { _, _ in (200, ["Cache-Control": "no-store"], String(repeating: "x", count: 200_000)) }
        let (server, cache) = try server(origin)
        var small = TaskConfiguration()
        small.maximumResponseSize = 1_000
        var large = TaskConfiguration()
        large.maximumResponseSize = 100 << 20
        let smallRuns = startGets(2, server: server, configuration: small)
        let largeRuns = startGets(2, server: server, configuration: large)
        try await waitUntil("4 callers wait") { cache.coalescer.waitingCount == 4 }
        gate.open()
        for run in smallRuns {
            await #expect {
                _ = try await run.value
            } throws: { error in
                guard let failure = (error as? ConveyError)?.sizeLimit else { return false }
                return failure.limit == 1_000
            }
        }
        for run in largeRuns { #expect(try await run.value.data.count == 200_000) }
        #expect(origin.count == 2)
    }
}
