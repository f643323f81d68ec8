import Foundation
import Testing
@testable import Convey

/// A payload whose decoding waits until another decode is running at the same time. If decoding
/// were serialised on `ConveyActor`, no two could ever overlap and every decode would give up.
private struct Rendezvous: Decodable, Sendable {
    static let inside = Counter()
    let overlapped: Bool

    init(from decoder: any Decoder) throws {
        Self.inside.increment()
        defer { Self.inside.decrement() }
        let deadline = Date().addingTimeInterval(5)
        while Self.inside.peak < 2, Date() < deadline { usleep(1_000) }
        overlapped = Self.inside.peak >= 2
    }
}

/// Counts decodes in progress and remembers the most seen at once.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var highest = 0
    func increment() { lock.withLock { count += 1; highest = max(highest, count) } }
    func decrement() { lock.withLock { count -= 1 } }
    var peak: Int { lock.withLock { highest } }
}

private struct DecodeTask: DownloadingTask {
    typealias DownloadPayload = Rendezvous
    let server: ConveyServer
    var path: String { "big" }
}

@Suite("Concurrent decoding")
struct ConcurrentDecodingTests {
    @Test func decodingRunsOffTheActorSoTasksDecodeInParallel() async throws {
        let server = try await stubServer(.answering(body: "{}"))
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<2 {
                group.addTask { try await DecodeTask(server: server).download().payload.overlapped }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results == [true, true])
    }
}
