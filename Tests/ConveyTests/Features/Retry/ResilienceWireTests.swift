import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct WireTask: ServerTask {
    let server: ConveyServer
    let path: String
    var configuration: TaskConfiguration?
    var sessionTag: String?
    var retryPolicy: RetryPolicy?
    var attempts: EventLog?

    func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
        attempts?.add("attempt")
        return request
    }
}

@Suite("Resilience on the wire", .wire)
@ConveyActor
struct ResilienceWireTests {
    // Only outcomes are asserted, never durations: a busy machine stretches every duration. A
    // transfer that was not stopped would end in another outcome (a 30 s drip completes with 200).
    @Test func serverDrippingBytesIsEndedByTheTotalTimeout() async throws {
        let task = WireTask(server: try httpbinServer(), path: "drip?duration=30&numbytes=30&delay=0",
                            configuration: .init(timeout: .seconds(5), totalTimeout: .milliseconds(1500)))
        let error = await #expect(throws: ConveyError.self) { try await task.download() }
        guard let failure = error?.timeout else { Issue.record("expected a timeout, got \(String(describing: error))"); return }
        #expect(failure.isTotal == true)
    }

    @Test func serverThatNeverAnswersIsEndedByTheAttemptTimeout() async throws {
        let task = WireTask(server: try httpbinServer(), path: "delay/10", configuration: .init(timeout: .milliseconds(400)))
        let error = await #expect(throws: ConveyError.self) { try await task.download() }
        guard let failure = error?.timeout else { Issue.record("expected a timeout"); return }
        #expect(failure.isTotal == false, "the server answers after 10 s")
    }

    @Test func retriesReachTheRealServerEachTime() async throws {
        let attempts = EventLog()
        let task = WireTask(server: try httpbinServer(), path: "status/503",
                            retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(20), jitter: 0), attempts: attempts)
        let error = await #expect(throws: HTTPError.self) { try await task.download() }
        #expect(error?.serverError == .serviceUnavailable)
        #expect(attempts.events.count == 3)
    }

    @Test func cancelByTagStopsTaggedTransfersAndLeavesOthersToFinish() async throws {
        let server = try httpbinServer()
        let tag = "wire-\(UUID())"
        let tagged = Task { try await WireTask(server: server, path: "drip?duration=30&numbytes=30&delay=0", sessionTag: tag).download() }
        let untagged = Task { try await WireTask(server: server, path: "delay/1").download() }
        try await waitForSessions(count: 1) { $0.tag == tag }
        #expect(ConveySession.cancel(sessionWithTag: tag) == 1)
        #expect(await tagged.result.failure?.isCancellation == true, "the tagged transfer lasts 30 s unless cancelled")
        #expect(try await untagged.value.statusCode == 200)
    }

    @Test func basicChallengeWithRefreshRetriesWithTheNewCredentials() async throws {
        final class BasicServer: ConveyServer {
            var credentials: String?
            override func headers(for task: any DownloadingTask) async throws -> Headers {
                guard let credentials else { return [] }
                return ["Authorization": "Basic " + Data(credentials.utf8).base64EncodedString()]
            }
            override func refreshCredentials(after error: HTTPError) async throws -> Bool {
                credentials = "user:pass"
                return true
            }
        }
        let server = BasicServer(remote: try TestServers.httpbin(), configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        let response = try await WireTask(server: server, path: "basic-auth/user/pass", configuration: .init(timeout: .seconds(10))).download()
        #expect(response.statusCode == 200)
        #expect(response.attemptNumber == 2)
    }
}
