import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Convey

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

        func willSendRequest(request: URLRequest) async throws -> URLRequest {
            blockThread(seconds: 5)
            return request
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func transfersInFlightKeepMovingWhileAHookBlocksTheActor() async throws {
        let server = ConveyServer(remote: try TestServers.events(), configuration: ServerConfiguration(echoSink: EchoCapture()))
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

/// Blocks the calling thread, as synchronous app code does.
private func blockThread(seconds: TimeInterval) {
    let done = DispatchSemaphore(value: 0)
    _ = done.wait(timeout: .now() + seconds)
}
