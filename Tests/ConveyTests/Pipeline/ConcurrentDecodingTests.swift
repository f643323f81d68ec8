import Foundation
import Testing
@testable import Convey

/// A payload whose decoding asks `ConveyActor` to run a job and blocks until it has. If decoding
/// ran on the actor, the job could not run until decoding ended, and the wait would run out (after
/// a minute: long enough for any busy machine); off the actor, the job runs at once on another
/// thread. The wait blocks on a semaphore rather than spinning, so it costs no CPU.
private struct ActorProbe: Decodable, Sendable {
    let actorWasFree: Bool

    init(from decoder: any Decoder) throws {
        let ran = DispatchSemaphore(value: 0)
        Task { @ConveyActor in ran.signal() }
        actorWasFree = ran.wait(timeout: .now() + 60) == .success
    }
}

private struct ProbeTask: DownloadingTask {
    typealias DownloadPayload = ActorProbe
    let server: ConveyServer
    var path: String { "probe" }
}

@Suite("Concurrent decoding")
struct ConcurrentDecodingTests {
    @Test func decodingDoesNotHoldTheActor() async throws {
        let server = try await stubServer(.answering(body: "{}"))
        #expect(try await ProbeTask(server: server).download().payload.actorWasFree)
    }
}
