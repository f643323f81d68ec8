import Foundation
import Testing
@testable import Convey

/// A payload whose decoding asks `ConveyActor` to run a job and blocks until it has. If decoding
/// ran on the actor, the job could not run until decoding ended, and the wait would run out (after
/// a minute: long enough for any busy machine); off the actor, the job runs at once on another
/// thread. The wait blocks on a semaphore rather than spinning, so it costs no CPU.
private struct ActorProbe: Decodable, Sendable {
    let actorWasFree: Bool

    private enum CodingKeys: CodingKey { case padding }

    init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .padding)
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

#if canImport(CConveyCurlShim)
/// A payload that records whether it was decoded on `ConveyActor`'s executor, the event loop thread.
private struct IsolationProbe: Decodable, Sendable {
    let decodedOnTheActor: Bool

    init(from decoder: any Decoder) throws {
        decodedOnTheActor = CurlEventLoop.shared.isCurrent
    }
}

private struct IsolationProbeTask: DownloadingTask {
    typealias DownloadPayload = IsolationProbe
    let server: ConveyServer
    var path: String { "probe" }
}
#endif

@Suite("Concurrent decoding")
struct ConcurrentDecodingTests {
    @Test func largeBodiesDecodeOffTheActor() async throws {
        let padding = String(repeating: "x", count: PayloadDecoding.inlineDecodingLimit)
        let server = try await stubServer(.answering(body: #"{"padding": "\#(padding)"}"#))
        #expect(try await ProbeTask(server: server).download().payload.actorWasFree)
    }

    #if canImport(CConveyCurlShim)
    @Test @ConveyActor func smallBodiesDecodeOnTheActor() async throws {
        let server = try stubServer(.answering(body: #"{"onActor": true}"#))
        #expect(try await IsolationProbeTask(server: server).download().payload.decodedOnTheActor)
    }
    #endif
}
