import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// App code on `@ConveyActor` that blocks never stalls the transfers of other tasks: the actor is
/// not the thread that moves sockets. Only outcomes are asserted.
@Suite("A blocking hook", .wire)
@ConveyActor
struct BlockingHookTests {
    /// A line every 100 ms for 5 s from the event server, well inside a 2.5 s idle timeout even
    /// on a busy machine.
    private struct Drip: ServerTask {
        let server: ConveyServer
        let tag: String
        var path: String { "paced?count=50&ms=100" }
        var sessionTag: String? { tag }
        var configuration: TaskConfiguration? { TaskConfiguration(timeout: .milliseconds(2500)) }
    }

    /// Blocks the actor for 5 s in its hook, as a slow synchronous keychain or file read would.
    private struct Blocking: ServerTask {
        let server: ConveyServer
        var path: String { "paced?count=1&ms=0" }

        func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
            blockThread(seconds: 5)
            return request
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func transfersInFlightKeepMovingWhileAHookBlocksTheActor() async throws {
        let server = ConveyServer(remote: try TestServers.events(), configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        let tag = "drip-\(UUID())"
        let drips = (0..<4).map { _ in Task { try await Drip(server: server, tag: tag).download() } }
        try await waitForSessions(count: 4) { $0.tag == tag }
        // Let the transfers start moving before the actor is blocked.
        try await Task.sleep(for: .milliseconds(300))
        _ = try await Blocking(server: server).download()
        for drip in drips {
            let response = try await drip.value
            #expect(response.statusCode == 200)
            #expect(response.data.count == 50 * ": still here\n".utf8.count, "with the actor on the I/O thread, the idle timeout fired")
        }
    }
}

#if os(Linux) && canImport(CConveyCurlShim)
/// Where app code runs: never on the curl event loop's thread, whatever the hook.
@Suite("App code and the event loop", .wire)
@ConveyActor
struct AppCodeThreadTests {
    /// Records, for each hook, whether it ran on the event loop's thread.
    final class Sightings: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [String: Bool] = [:]
        func note(_ hook: String) { lock.withLock { seen[hook] = CurlEventLoop.shared.isCurrent } }
        var onTheLoop: [String: Bool] { lock.withLock { seen } }
    }

    private final class WatchedServer: ConveyServer, @unchecked Sendable {
        let sightings: Sightings
        init(remote: Remote, sightings: Sightings) {
            self.sightings = sightings
            super.init(remote: remote, configuration: ServerConfiguration(echoSink: EchoCapture().sink))
            transport = CurlTransport()
        }
        override func headers(for task: any DownloadingTask) async throws -> Headers {
            sightings.note("server headers")
            return try await super.headers(for: task)
        }
        override func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async {
            sightings.note("server didFinish")
        }
    }

    private struct Watched: ServerTask {
        let server: ConveyServer
        let sightings: Sightings
        var path: String { "paced?count=3&ms=10" }
        func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
            sightings.note("willSendRequest")
            return request
        }
        func didReceiveResponse(response: ResponseHead, data: Data) async throws { sightings.note("didReceiveResponse") }
        func didFinish(with response: ServerResponse<Data>) async { sightings.note("didFinish") }
    }

    @Test func everyHookRunsOffTheEventLoopThread() async throws {
        let sightings = Sightings()
        let server = WatchedServer(remote: try TestServers.events(), sightings: sightings)
        for _ in 0..<3 { _ = try await Watched(server: server, sightings: sightings).download() }
        #expect(sightings.onTheLoop == ["server headers": false, "willSendRequest": false, "didReceiveResponse": false,
                                        "didFinish": false, "server didFinish": false])
    }
}
#endif

/// Blocks the calling thread, as synchronous app code does.
private func blockThread(seconds: TimeInterval) {
    let done = DispatchSemaphore(value: 0)
    _ = done.wait(timeout: .now() + seconds)
}
