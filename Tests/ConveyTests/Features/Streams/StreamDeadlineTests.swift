import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A stream keeps its run's one deadline past the head only when it asked for a total timeout:
/// measured on a clock the test moves by hand, against the event server's `/paced` stream (a
/// comment every 100 ms for a minute).
@Suite("A stream's deadline", .wire)
@ConveyActor
struct StreamDeadlineTests {
    private static let paced = ["count": "600", "ms": "100"]

    @Test(arguments: TransportKind.streaming)
    func theRunsDeadlineEndsTheBodyOfAStreamThatAskedForIt(_ kind: TransportKind) async throws {
        let clock = ManualRunClock()
        let server = streamingServer(kind, remote: try TestServers.events()) { $0.runClock = clock }
        let response = try await StreamedGet(server: server, path: "paced", queryParameters: Self.paced).stream(totalTimeout: .seconds(30))
        var chunks = response.payload.makeAsyncIterator()
        #expect(try await chunks.next() != nil)
        clock.advance(by: .seconds(31))
        var ending: (any Error)?
        do {
            while try await chunks.next() != nil {}
        } catch {
            ending = error
        }
        guard let failure = (ending as? ConveyError)?.timeout else {
            Issue.record("expected a total timeout, got \(String(describing: ending))")
            return
        }
        #expect(failure.isTotal == true)
        #expect(failure.limit == .seconds(30))
        #expect(failure.url?.path == "/paced")
    }

    @Test(arguments: TransportKind.streaming)
    func theTasksTotalTimeoutCoversOnlyTheHead(_ kind: TransportKind) async throws {
        let clock = ManualRunClock()
        let server = streamingServer(kind, remote: try TestServers.events()) {
            $0.runClock = clock
            $0.defaultTotalTimeout = .seconds(5)
        }
        let response = try await StreamedGet(server: server, path: "paced", queryParameters: Self.paced).stream()
        clock.advance(by: .seconds(60))
        var chunks = response.payload.makeAsyncIterator()
        for _ in 0..<3 { #expect(try await chunks.next() != nil) }
        response.payload.cancel()
    }
}
