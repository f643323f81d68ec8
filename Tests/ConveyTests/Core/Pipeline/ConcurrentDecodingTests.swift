import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Two decoders that must meet: each waits (up to a guard time) until the other has started.
/// Decoding on `@ConveyActor`, one at a time, they never meet.
private final class Rendezvous: @unchecked Sendable {
    private let condition = NSCondition()
    private var arrived = 0

    /// Whether the other party arrived before the guard time ran out.
    func meet() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        arrived += 1
        condition.broadcast()
        let deadline = Date().addingTimeInterval(20)
        while arrived < 2 {
            guard condition.wait(until: deadline) else { return arrived >= 2 }
        }
        return true
    }
}

private struct MeetingProbe: Decodable, Sendable {
    static let rendezvous = Rendezvous()
    let met: Bool

    init(from decoder: any Decoder) throws {
        met = Self.rendezvous.meet()
    }
}

private struct MeetingTask: DownloadingTask {
    typealias DownloadPayload = MeetingProbe
    let server: ConveyServer
    var path: String { "probe" }
}

@Suite("Concurrent decoding")
@ConveyActor
struct ConcurrentDecodingTests {
    @Test func largeBodiesDecodeInParallelOffTheActor() async throws {
        let padding = String(repeating: "x", count: 16 * 1024)
        let server = try stubServer(.answering(body: #"{"padding": "\#(padding)"}"#))
        async let first = MeetingTask(server: server).download()
        async let second = MeetingTask(server: server).download()
        let (one, two) = try await (first, second)
        #expect(one.payload.met && two.payload.met)
    }
}
