import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Get: ServerTask {
    let server: ConveyServer
    let path: String
    var configuration: TaskConfiguration?
}

@Suite("URLSession transport on the wire", .wire)
struct URLSessionTransportTests {
    @Test func basicAuthChallengeWithoutCredentialsEndsAsUnauthorizedInsteadOfHanging() async throws {
        let server = try await httpbinServer()
        // A hang would end in the 20 s timeout, not in this 401.
        let error = await #expect(throws: HTTPError.self) {
            try await Get(server: server, path: "basic-auth/user/pass", configuration: .init(timeout: .seconds(20))).download()
        }
        #expect(error?.statusCode == 401)
        #expect(error?.clientError == .unauthorized)
        #expect(error?.header("WWW-Authenticate")?.hasPrefix("Basic") == true)
    }

    @Test func idleTimeoutEndsAsTypedTimeout() async throws {
        let server = try await httpbinServer()
        let error = await #expect(throws: ConveyError.self) {
            try await Get(server: server, path: "delay/3", configuration: .init(timeout: .milliseconds(500))).download()
        }
        guard let failure = error?.timeout else { Issue.record("expected a timeout, got \(String(describing: error))"); return }
        #expect(failure.isTotal == false)
        #expect(failure.limit == .milliseconds(500))
    }

    @Test func cancellingTheSwiftTaskCancelsTheTransferPromptly() async throws {
        let server = try await httpbinServer()
        let run = Task { try await Get(server: server, path: "drip?duration=30&numbytes=30", configuration: nil).download() }
        try await Task.sleep(for: .milliseconds(300))
        run.cancel()
        let result = await run.result
        #expect(throws: ConveyError.self) { try result.get() }
        #expect((result.failure)?.isCancellation == true)
        #expect((result.failure)?.displayMessage == nil)
    }

    @Test func fractionalTimeoutsAreNotTruncatedToWholeSeconds() async throws {
        let server = try await httpbinServer()
        let clock = ContinuousClock.now
        await #expect(throws: ConveyError.self) {
            try await Get(server: server, path: "delay/10", configuration: .init(timeout: .milliseconds(1500))).download()
        }
        let elapsed = clock.duration(to: .now)
        #expect(elapsed >= .milliseconds(1400), "URLSession on Linux alone would fire after 1 s")
    }

    @Test func responsesAreNeverServedFromURLCache() async throws {
        // URLCache on Linux keys entries without the query string; Convey turns it off.
        let server = try await httpbinServer()
        for value in ["one", "two"] {
            let response = try await Get(server: server, path: "response-headers?Cache-Control=max-age%3D600&value=\(value)", configuration: nil).download()
            let body = try JSONDecoder().decode([String: String].self, from: response.data)
            #expect(body["value"] == value)
        }
    }
}
