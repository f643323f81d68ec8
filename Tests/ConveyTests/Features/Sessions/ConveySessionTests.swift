import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct SlowTask: ServerTask {
    let server: ConveyServer
    var sessionTag: String?
    let log: EventLog
    var path: String { "slow" }
    func didFail(with error: any Error) async { log.add("\(sessionTag ?? "untagged") failed cancelled=\(error.isCancellation)") }
}

private struct OtherSlowTask: ServerTask {
    let server: ConveyServer
    var path: String { "other" }
}

/// Waits until `count` runs match, so tests do not depend on how fast a loaded machine starts them.
@ConveyActor
func waitForSessions(count: Int, timeout: Duration = .seconds(60), where matches: (ConveySession) -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ConveySession.activeSessions.filter(matches).count < count {
        guard ContinuousClock.now < deadline else { Issue.record("sessions did not start"); return }
        try await Task.sleep(for: .milliseconds(5))
    }
}

@Suite("Sessions")
@ConveyActor
struct ConveySessionTests {
    let log = EventLog()

    /// Whether the slow server's requests may answer: until a test opens it they wait (or end
    /// when cancelled), so every run is still active when the test looks, however slow the machine.
    let answersReleased = Locked(false)

    /// A server whose requests wait until `answersReleased` is set and then succeed.
    func slowServer() throws -> ConveyServer {
        try stubServer(StubTransport { [answersReleased] request in
            while !answersReleased.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(2)) }
            return TransportResponse(url: request.request.url, body: Data("done".utf8))
        })
    }

    /// A server whose requests succeed at once.
    func quickServer() throws -> ConveyServer {
        try stubServer(StubTransport { request in TransportResponse(url: request.request.url, body: Data("done".utf8)) })
    }

    @Test func cancellingATagStopsOnlyTheTasksWithThatTag() async throws {
        let server = try slowServer()
        let tagged = Task { try await SlowTask(server: server, sessionTag: "search", log: log).download() }
        let alsoTagged = Task { try await SlowTask(server: server, sessionTag: "search", log: log).download() }
        let otherTag = Task { try await SlowTask(server: server, sessionTag: "profile", log: log).download() }
        let untagged = Task { try await SlowTask(server: server, sessionTag: nil, log: log).download() }
        try await waitForSessions(count: 4) { $0.taskType == SlowTask.self }
        #expect(ConveySession.activeSessions.filter { $0.tag == "search" }.count == 2)
        #expect(ConveySession.cancel(sessionWithTag: "search") == 2)
        answersReleased.withLock { $0 = true }
        #expect(await tagged.result.failure?.isCancellation == true)
        #expect(await alsoTagged.result.failure?.isCancellation == true)
        #expect(try await otherTag.value.stringResult == "done")
        #expect(try await untagged.value.stringResult == "done")
        #expect(log.events == ["search failed cancelled=true", "search failed cancelled=true"])
    }

    @Test func cancellingByTypeStopsOnlyThatType() async throws {
        let server = try slowServer()
        let other = Task { try await OtherSlowTask(server: server).download() }
        let slow = Task { try await SlowTask(server: server, sessionTag: "by-type", log: log).download() }
        try await waitForSessions(count: 1) { $0.tag == "by-type" }
        try await waitForSessions(count: 1) { $0.taskType == OtherSlowTask.self }
        #expect(ConveySession.cancel(tasksOfType: OtherSlowTask.self) >= 1)
        answersReleased.withLock { $0 = true }
        #expect(await other.result.failure?.isCancellation == true)
        #expect(try await slow.value.stringResult == "done")
    }

    @Test func finishedRunsLeaveNoSessionBehind() async throws {
        let server = try quickServer()
        _ = try await SlowTask(server: server, sessionTag: "finished-\(UUID())", log: log).download()
        #expect(ConveySession.activeSessions.allSatisfy { $0.tag?.hasPrefix("finished-") != true })
        #expect(ConveySession.cancel(sessionWithTag: "no-such-tag") == 0)
    }

    @Test func cancellingOneRunLeavesTheCallersTaskUsable() async throws {
        let server = try slowServer()
        let tag = "one-\(UUID())"
        let caller = Task { () -> String in
            let first = try? await SlowTask(server: server, sessionTag: tag, log: log).download()
            let second = try await SlowTask(server: server, sessionTag: nil, log: log).download()
            return "\(first == nil) \(second.stringResult ?? "")"
        }
        try await waitForSessions(count: 1) { $0.tag == tag }
        ConveySession.cancel(sessionWithTag: tag)
        answersReleased.withLock { $0 = true }
        #expect(try await caller.value == "true done")
    }
}
