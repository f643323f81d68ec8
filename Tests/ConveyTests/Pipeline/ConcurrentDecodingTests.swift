#if canImport(CConveyCurlShim)
import Foundation
import Testing
@testable import Convey

/// A payload that records whether it was decoded on `ConveyActor`'s executor, the event loop
/// thread. It only looks: a probe that blocked would hold a thread the rest of the suite needs.
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

@Suite("Concurrent decoding")
@ConveyActor
struct ConcurrentDecodingTests {
    @Test func largeBodiesDecodeOffTheActor() async throws {
        let padding = String(repeating: "x", count: PayloadDecoding.inlineDecodingLimit)
        let server = try stubServer(.answering(body: #"{"padding": "\#(padding)"}"#))
        #expect(try await IsolationProbeTask(server: server).download().payload.decodedOnTheActor == false)
    }

    @Test func smallBodiesDecodeOnTheActor() async throws {
        let server = try stubServer(.answering(body: #"{"onActor": true}"#))
        #expect(try await IsolationProbeTask(server: server).download().payload.decodedOnTheActor)
    }
}
#endif
