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
    /// Drips 30 bytes over 3 s: a byte every 100 ms, well inside a 1 s idle timeout.
    private struct Drip: ServerTask {
        let server: ConveyServer
        let tag: String
        var path: String { "drip?duration=3&numbytes=30&delay=0" }
        var sessionTag: String? { tag }
        var configuration: TaskConfiguration? { TaskConfiguration(timeout: .seconds(1)) }
    }

    /// Blocks the actor for 3 s in its hook, as a synchronous keychain or file read would.
    private struct Blocking: ServerTask {
        let server: ConveyServer
        var path: String { "get" }

        func willSendRequest(request: URLRequest) async throws -> URLRequest {
            blockThread(seconds: 3)
            return request
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func transfersInFlightKeepMovingWhileAHookBlocksTheActor() async throws {
        let server = try httpbinServer()
        let tag = "drip-\(UUID())"
        let drips = (0..<4).map { _ in Task { try await Drip(server: server, tag: tag).download() } }
        try await waitForSessions(count: 4) { $0.tag == tag }
        // Let the transfers start moving before the actor is blocked.
        try await Task.sleep(for: .milliseconds(300))
        _ = try await Blocking(server: server).download()
        for drip in drips {
            let response = try await drip.value
            #expect(response.statusCode == 200)
            #expect(response.data.count == 30, "with the actor on the I/O thread, the 1 s idle timeout fired")
        }
    }
}

/// Blocks the calling thread, as synchronous app code does.
private func blockThread(seconds: TimeInterval) {
    let done = DispatchSemaphore(value: 0)
    _ = done.wait(timeout: .now() + seconds)
}
