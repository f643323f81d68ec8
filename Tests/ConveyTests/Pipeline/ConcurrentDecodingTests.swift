import Foundation
import Testing
@testable import Convey

/// A payload whose decoding asks `ConveyActor` to run a job and waits for it. If decoding ran on
/// the actor, the job could not run until decoding ended and the wait would time out; off the
/// actor, the job runs at once on another thread.
private struct ActorProbe: Decodable, Sendable {
    let actorWasFree: Bool

    init(from decoder: any Decoder) throws {
        let ran = Flag()
        Task { @ConveyActor in ran.set() }
        let deadline = Date().addingTimeInterval(2)
        while !ran.isSet, Date() < deadline { usleep(200) }
        actorWasFree = ran.isSet
    }
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
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
