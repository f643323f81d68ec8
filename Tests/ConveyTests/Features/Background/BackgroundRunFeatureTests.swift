import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct BackgroundTask: ServerTask {
    let server: ConveyServer
    var queryItems: [URLQueryItem] = []
    var path: String { "work" }
}

private struct StubFailure: Error {}

/// A server with `finishesRunsInBackground` reports each run to the process's background-task
/// assertion from its start to its end, however it ends. One test, because the assertion is the
/// process's: a second test counting it at the same time would see this one's runs.
@Suite("Runs finishing in the background")
@ConveyActor
struct BackgroundRunFeatureTests {
    @Test func eachRunCountsAsInFlightFromItsStartToItsEndWhetherItSucceedsOrFails() async throws {
        let assertion = BackgroundRunAssertion.shared
        let seenDuringRuns = Locked<[Int]>([])
        let server = try stubServer(StubTransport { request in
            seenDuringRuns.withLock { $0.append(assertion.runsInFlight) }
            if request.request.url.query == "fail" { throw StubFailure() }
            return TransportResponse(url: request.request.url, body: Data("done".utf8))
        }) { $0.finishesRunsInBackground = true }
        let untouched = try stubServer(StubTransport { request in
            seenDuringRuns.withLock { $0.append(assertion.runsInFlight) }
            return TransportResponse(url: request.request.url, body: Data("done".utf8))
        })

        _ = try await BackgroundTask(server: server).download()
        #expect(assertion.runsInFlight == 0)
        var failing = BackgroundTask(server: server)
        failing.queryItems = [URLQueryItem(name: "fail", value: nil)]
        await #expect(throws: (any Error).self) { try await failing.download() }
        #expect(assertion.runsInFlight == 0)
        _ = try await BackgroundTask(server: untouched).download()
        #expect(seenDuringRuns.withLock { $0 } == [1, 1, 0])
    }
}
