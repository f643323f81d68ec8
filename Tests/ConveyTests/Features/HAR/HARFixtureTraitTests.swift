import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey
@testable import ConveyTesting

private struct WhoAmI: ServerTask {
    let server: ConveyServer
    var path: String { "whoami" }
}

private struct Status: ServerTask {
    let server: ConveyServer
    var path: String { "status" }
    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { count < 2 ? 0 : nil }
}

/// The one server every test here shares, so that only the fixtures' scope keeps tests apart.
@ConveyActor
private let sharedServer = try? offlineServer()

/// Lets two tests wait for each other, so that their requests interleave whenever both run (a
/// suite's tests run in parallel); one running alone goes on after `patience` instead of hanging.
private actor Rendezvous {
    private var arrived = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func meet(parties: Int, patience: Duration) async {
        arrived += 1
        if arrived >= parties {
            waiting.forEach { $0.resume() }
            waiting.removeAll()
            return
        }
        let alone = Task { [weak self] in
            try? await Task.sleep(for: patience)
            await self?.release()
        }
        await withCheckedContinuation { waiting.append($0) }
        alone.cancel()
    }

    private func release() {
        waiting.forEach { $0.resume() }
        waiting.removeAll()
    }
}

/// Where the record-mode test writes: a file of its own, removed by the test.
private let recordedFile = FileManager.default.temporaryDirectory.appending(path: "convey-har-trait-\(UUID().uuidString).har")

@Suite("The .harFixtures trait")
struct HARFixtureTraitTests {
    private static let rendezvous = Rendezvous()

    @ConveyActor
    private func askRepeatedly(expecting answer: String) async throws {
        await Self.rendezvous.meet(parties: 2, patience: .seconds(30))
        for _ in 0..<25 {
            let response = try await WhoAmI(server: try #require(sharedServer)).download()
            #expect(String(decoding: response.data, as: UTF8.self) == answer)
            await Task.yield()
        }
    }

    @Test(.harFixtures("../../../Fixtures/har/parallel-a.har"))
    func aTestSeesItsOwnFixtures() async throws {
        try await askRepeatedly(expecting: "a")
    }

    @Test(.harFixtures("../../../Fixtures/har/parallel-b.har"))
    func aTestRunningAlongsideSeesOnlyItsOwnFixtures() async throws {
        try await askRepeatedly(expecting: "b")
    }

    @Test func theModeVariableOverridesTheTraitsMode() throws {
        #expect(try HARFixtureTrait.mode(default: .replay, environment: [:]) == .replay)
        #expect(try HARFixtureTrait.mode(default: .replay, environment: ["CONVEY_HAR_MODE": "record"]) == .record)
        #expect(try HARFixtureTrait.mode(default: .record, environment: ["CONVEY_HAR_MODE": "PASSTHROUGH"]) == .passThrough)
        #expect(throws: HARModeError.self) { try HARFixtureTrait.mode(default: .replay, environment: ["CONVEY_HAR_MODE": "rewind"]) }
    }

    @Test func aRelativePathIsTheTestFilesFolders() {
        let trait = HARFixtureTrait.harFixtures("Fixtures/a.har")
        #expect(trait.file.path(percentEncoded: false) == URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Fixtures/a.har").path(percentEncoded: false))
        #expect(HARFixtureTrait.harFixtures("/abs/b.har", mode: .record).file.path(percentEncoded: false) == "/abs/b.har")
    }

    @Test(.harFixtures(recordedFile.path(percentEncoded: false), mode: .record))
    @ConveyActor
    func recordModeSendsThroughTheServersOwnTransportAndKeepsTheExchange() async throws {
        defer { try? FileManager.default.removeItem(at: recordedFile) }
        let seen = RequestLog()
        let server = try stubServer(.answering(body: "from the network", seen: seen))

        let response = try await WhoAmI(server: server).download()

        #expect(String(decoding: response.data, as: UTF8.self) == "from the network")
        #expect(seen.requests.count == 1)
        let entries = try HARText.entries(of: recordedFile)
        #expect(entries.count == 1)
        #expect((entries.first?["_convey"] as? [String: Any])?["taskType"] as? String == "WhoAmI")
    }
}

/// A suite whose every test gets its own fixtures from the suite's trait: each sees the 503 first.
@Suite("The .harFixtures trait on a suite", .harFixtures("../../../Fixtures/har/flaky-status.har"))
@ConveyActor
struct HARFixtureSuiteTraitTests {
    @Test func oneTestSeesTheEntriesInOrder() async throws {
        let response = try await Status(server: try #require(sharedServer)).download()
        #expect(response.attemptNumber == 2)
        #expect(String(decoding: response.data, as: UTF8.self) == "up")
    }

    @Test func anotherTestSeesThemFromTheStartToo() async throws {
        let response = try await Status(server: try #require(sharedServer)).download()
        #expect(response.attemptNumber == 2)
        #expect(String(decoding: response.data, as: UTF8.self) == "up")
    }
}
