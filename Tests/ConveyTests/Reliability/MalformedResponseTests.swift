import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// What the streaming seam guarantees against the fault server: a head or body that is not what
/// it claims is a typed error, never a success; limits stop a transfer as soon as they are passed;
/// codings Convey does not know pass through untouched. CurlTransport, the Linux default, is
/// held to all of it; URLSession on Linux where FoundationNetworking lets Convey see the fault
/// (it traps on a head that never ends, so that case runs on curl only).
@Suite("Malformed responses", .wire)
@ConveyActor
struct MalformedResponseTests {
    private struct Probe: ServerTask {
        let server: ConveyServer
        let path: String
        var echoStyle: TaskEchoStyle { .none }
    }

    private func server(_ kind: TransportKind, configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> ConveyServer {
        var configuration = ServerConfiguration(echoSink: EchoCapture().sink)
        configure(&configuration)
        let server = ConveyServer(remote: try TestServers.faults(), configuration: configuration)
        server.transport = kind.make()
        return server
    }

    private func failureKind(_ error: ConveyError?) -> TransportFailure? {
        if let failure = error?.transportFailure { return failure.kind }
        return nil
    }

    #if os(Linux) && canImport(CConveyCurlShim)
    @Test func aHeadThatNeverEndsIsMalformedNotAnEmptySuccess() async throws {
        let error = await #expect(throws: ConveyError.self) { try await Probe(server: try server(.curl), path: "never-ending-head").download() }
        #expect(failureKind(error) == .malformedResponse)
        #expect(error?.logDetail.contains("never completed") == true)
    }

    @Test func aTruncatedGzipBodyIsMalformed() async throws {
        let error = await #expect(throws: ConveyError.self) { try await Probe(server: try server(.curl), path: "gzip-truncated").download() }
        #expect(failureKind(error) == .malformedResponse)
        #expect(error?.logDetail.contains("cut short") == true)
    }

    @Test func conflictingContentLengthsAreMalformed() async throws {
        let error = await #expect(throws: ConveyError.self) {
            try await Probe(server: try server(.curl), path: "conflicting-content-length").download()
        }
        #expect(failureKind(error) == .malformedResponse)
        #expect(error?.logDetail.contains("conflicting Content-Length") == true)
    }

    @Test func aHeaderLineOverCurlsLimitIsAHeadTooLarge() async throws {
        let error = await #expect(throws: ConveyError.self) { try await Probe(server: try server(.curl), path: "huge-header-line").download() }
        guard let failure = error?.sizeLimit else {
            Issue.record("expected responseTooLarge, got \(String(describing: error))")
            return
        }
        #expect(failure.isHead == true)
    }

    @Test func aHeadOverTheServersLimitStopsThere() async throws {
        let server = try server(.curl) { $0.maximumResponseHeadSize = 64 * 1024 }
        let error = await #expect(throws: ConveyError.self) { try await Probe(server: server, path: "many-headers").download() }
        guard let failure = error?.sizeLimit else {
            Issue.record("expected responseTooLarge, got \(String(describing: error))")
            return
        }
        #expect(failure.isHead == true)
        #expect(failure.limit == 64 * 1024)
    }

    @Test func tenThousandFieldsAreAllKept() async throws {
        let response = try await Probe(server: try server(.curl), path: "many-headers").download()
        #expect(response.headerFields.count >= 10_000)
    }

    @Test func anUnknownContentCodingPassesThroughWithItsHeader() async throws {
        let response = try await Probe(server: try server(.curl), path: "unknown-content-encoding").download()
        #expect(response.header("Content-Encoding") == "x-custom")
        #expect(!response.data.isEmpty)
    }
    #endif

    @Test(arguments: TransportKind.allCases)
    func aBodyOverTheLimitStopsTheTransferWithTheLimitAndTheURL(_ kind: TransportKind) async throws {
        let server = try server(kind) { $0.maximumResponseSize = 1 << 20 }
        let error = await #expect(throws: ConveyError.self) { try await Probe(server: server, path: "bytes/8388608").download() }
        guard let failure = error?.sizeLimit else {
            Issue.record("expected responseTooLarge, got \(String(describing: error))")
            return
        }
        #expect(failure.isHead == false)
        #expect(failure.limit == 1 << 20)
        #expect(failure.url?.path == "/bytes/8388608")
    }

    @Test(arguments: TransportKind.allCases)
    func aTaskLimitOverridesTheServers(_ kind: TransportKind) async throws {
        struct Small: ServerTask {
            let server: ConveyServer
            var path: String { "bytes/4096" }
            var configuration: TaskConfiguration? { TaskConfiguration(maximumResponseSize: 1024) }
        }
        let error = await #expect(throws: ConveyError.self) { try await Small(server: try server(kind)).download() }
        guard let failure = error?.sizeLimit else {
            Issue.record("expected responseTooLarge, got \(String(describing: error))")
            return
        }
        #expect(failure.limit == 1024)
    }
}
