import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Both transports against `scripts/fault-server.py`: the same fault ends as the same kind of
/// failure, a request that must not be repeated is sent once, and nothing unsafe goes out.
@Suite("Faults on the wire", .wire, .serialized)
@ConveyActor
struct FaultWireTests {
    private struct Probe: ServerTask {
        let server: ConveyServer
        let path: String
        var method: HTTPMethod = .get
        var extraHeaders: Headers = []
        var configuration: TaskConfiguration?
        var headers: Headers { get async throws { extraHeaders } }
    }

    private struct Upload: DataUploadingTask {
        let server: ConveyServer
        let path: String
        var method: HTTPMethod = .post
        var uploadPayload: Data? = Data("order #1".utf8)
        var contentType: String = "text/plain"
    }

    private struct RewritingHeaders: ServerTask {
        let server: ConveyServer
        let path: String
        func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
            var changed = request
            changed.setValue("ok\nX-Injected: yes", forHTTPHeaderField: "X-Trace")
            return changed
        }
    }

    /// One fault and the kind of failure it must end as.
    struct Fault: Sendable, CustomTestStringConvertible {
        let route: String
        let kind: TransportFailure
        var testDescription: String { "\(route) → \(kind)" }
    }

    nonisolated static let faults: [Fault] = [
        Fault(route: "reset/before-head", kind: .connectionLost),
        Fault(route: "reset/mid-head", kind: .connectionLost),
        Fault(route: "reset/mid-body", kind: .connectionLost),
        Fault(route: "short-body", kind: .connectionLost),
        Fault(route: "not-http", kind: .malformedResponse),
        Fault(route: "invalid-status-line", kind: .malformedResponse),
        Fault(route: "broken-chunked", kind: .malformedResponse),
        Fault(route: "gzip-garbage", kind: .malformedResponse),
        Fault(route: "redirect/gopher", kind: .redirectRefused),
        Fault(route: "redirect/ftp", kind: .redirectRefused),
        Fault(route: "redirect/file", kind: .redirectRefused),
    ]

    private func server(_ kind: TransportKind, remote: Remote? = nil,
                        configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> ConveyServer {
        var configuration = ServerConfiguration(echoSink: EchoCapture().sink)
        configure(&configuration)
        let server = ConveyServer(remote: try remote ?? TestServers.faults(), configuration: configuration)
        server.transport = kind.make()
        return server
    }

    private func transportFailure(_ error: ConveyError?) -> (kind: TransportFailure, url: URL?, code: Int, reason: String)? {
        if let failure = error?.transportFailure { return failure }
        Issue.record("expected a transport failure, got \(String(describing: error))")
        return nil
    }

    private func headerFailure(_ error: ConveyError?) -> (name: String, source: String, reason: String)? {
        if let failure = error?.headerFieldFailure { return failure }
        Issue.record("expected an invalid header field, got \(String(describing: error))")
        return nil
    }

    @Test(arguments: TransportKind.allCases, faults)
    func eachFaultEndsAsTheSameKindOnEveryTransport(_ transport: TransportKind, _ fault: Fault) async throws {
        let error = await #expect(throws: ConveyError.self) {
            try await Probe(server: try server(transport), path: fault.route).send()
        }
        let failure = transportFailure(error)
        #expect(failure?.kind == fault.kind)
        #expect(failure?.url?.absoluteString.hasSuffix(fault.route) == true)
        #expect(error?.displayMessage == fault.kind.userMessage)
    }

    @Test(arguments: TransportKind.allCases)
    func aRefusedConnectionCannotConnect(_ transport: TransportKind) async throws {
        let closed = try #require(Remote(name: "closed", string: "http://127.0.0.1:9"))
        let error = await #expect(throws: ConveyError.self) {
            try await Probe(server: try server(transport, remote: closed), path: "x").send()
        }
        #expect(transportFailure(error)?.kind == .cannotConnect)
        #expect(error?.displayMessage == "Couldn't connect to the server. Check your connection and try again.")
    }

    @Test(arguments: TransportKind.allCases)
    func anUntrustedCertificateIsASecureConnectionFailure(_ transport: TransportKind) async throws {
        let url = try TestServers.nginxTLS("/hello.txt")
        let remote = Remote(name: "tls", url: try #require(URL(string: "https://\(url.host ?? ""):\(url.port ?? 443)")))
        let error = await #expect(throws: ConveyError.self) {
            try await Probe(server: try server(transport, remote: remote), path: "hello.txt").send()
        }
        #expect(transportFailure(error)?.kind == .secureConnectionFailed)
    }

    @Test(arguments: TransportKind.allCases)
    func aStallMidBodyTimesOut(_ transport: TransportKind) async throws {
        let error = await #expect(throws: ConveyError.self) {
            try await Probe(server: try server(transport), path: "stall-mid-body", configuration: TaskConfiguration(timeout: .seconds(1))).send()
        }
        guard let failure = error?.timeout else { Issue.record("expected a timeout, got \(String(describing: error))"); return }
        #expect(failure.isTotal == false)
        #expect(failure.url?.path == "/stall-mid-body")
    }

    @Test(arguments: TransportKind.allCases)
    func aTransportItselfRefusesOtherSchemes(_ transport: TransportKind) async throws {
        let base = try #require(TestServers.faultURL)
        let gopher = try #require(URL(string: "gopher://127.0.0.1:\(base.port ?? 70)/count"))
        let error = await #expect(throws: URLError.self) { try await transport.make().send(gopher) }
        #expect(error?.code == .unsupportedURL)
    }

    @Test(arguments: TransportKind.allCases)
    func aGopherRemoteIsRejectedBeforeSending(_ transport: TransportKind) async throws {
        let base = try #require(TestServers.faultURL)
        let gopher = Remote(name: "gopher", url: try #require(URL(string: "gopher://127.0.0.1:\(base.port ?? 70)")))
        let error = await #expect(throws: ConveyError.self) {
            try await Probe(server: try server(transport, remote: gopher), path: "x").send()
        }
        guard case .invalidURL(_, let reason) = error else { Issue.record("expected invalidURL, got \(String(describing: error))"); return }
        #expect(reason.contains("http and https"))
    }

    /// The fault server's `/keepalive-then-drop` leaves a kept-alive connection that reads the
    /// next request, counts it and closes without answering.
    private func sendOnADyingConnection(_ server: ConveyServer, _ request: () async throws -> Void) async throws {
        _ = try await Probe(server: server, path: "keepalive-then-drop").send()
        try await request()
    }

    #if os(Linux) && canImport(CConveyCurlShim)
    @Test(arguments: [HTTPMethod.post, .patch])
    func curlNeverResendsANonIdempotentRequest(_ method: HTTPMethod) async throws {
        let server = try server(.curl)
        let counter = TestServers.newFaultCounter()
        var thrown: ConveyError?
        try await sendOnADyingConnection(server) {
            thrown = await #expect(throws: ConveyError.self) { try await Upload(server: server, path: counter, method: method).send() }
        }
        let failure = transportFailure(thrown)
        #expect(failure?.kind == .notResent, "\(String(describing: failure))")
        #expect(failure?.reason.contains(method.rawValue) == true)
        #expect(try await TestServers.faultCount(counter) == 1)
        // The retry decision sees it: a standard policy never retries a POST or PATCH.
        #expect(RetryPolicy.standard.retryInterval(afterError: try #require(thrown), count: 1, method: method) == nil)
    }

    @Test func curlNeverResendsABodylessPost() async throws {
        let server = try server(.curl)
        let counter = TestServers.newFaultCounter()
        try await sendOnADyingConnection(server) {
            await #expect(throws: ConveyError.self) { try await Probe(server: server, path: counter, method: .post).send() }
        }
        #expect(try await TestServers.faultCount(counter) == 1)
    }

    @Test func curlMayResendAGet() async throws {
        let server = try server(.curl)
        let counter = TestServers.newFaultCounter()
        try await sendOnADyingConnection(server) {
            let response = try await Probe(server: server, path: counter).download()
            #expect(response.httpResponse.statusCode == 200)
        }
        #expect(try await TestServers.faultCount(counter) == 2)
    }
    #endif

    #if canImport(FoundationNetworking)
    @Test(arguments: [HTTPMethod.post, .patch])
    func urlSessionSendsANonIdempotentRequestOnAConnectionOfItsOwn(_ method: HTTPMethod) async throws {
        let server = try server(.urlSession)
        let withBody = TestServers.newFaultCounter()
        let withoutBody = TestServers.newFaultCounter()
        try await sendOnADyingConnection(server) {
            try await Upload(server: server, path: withBody, method: method).send()
        }
        try await sendOnADyingConnection(server) {
            try await Probe(server: server, path: withoutBody, method: method).send()
        }
        #expect(try await TestServers.faultCount(withBody) == 1)
        #expect(try await TestServers.faultCount(withoutBody) == 1)
    }
    #endif

    @Test(arguments: TransportKind.allCases)
    func aLineBreakInATaskHeaderIsNeverSent(_ transport: TransportKind) async throws {
        let server = try server(transport)
        let counter = TestServers.newFaultCounter()
        let error = await #expect(throws: ConveyError.self) {
            try await Probe(server: server, path: counter, extraHeaders: ["X-Note": "a\r\nX-Injected: yes"]).send()
        }
        let failure = headerFailure(error)
        #expect(failure?.name == "X-Note")
        #expect(failure?.source == HeaderFieldSource.taskHeaders.phrase)
        #expect(try await TestServers.faultCount(counter) == 0)
    }

    @Test(arguments: TransportKind.allCases)
    func badFieldsFromEverySourceAreNeverSent(_ transport: TransportKind) async throws {
        let counter = TestServers.newFaultCounter()
        let defaults = try server(transport) { $0.defaultHeaders = ["X-Default": "x\ny"] }
        let defaultsError = await #expect(throws: ConveyError.self) { try await Probe(server: defaults, path: counter).send() }
        #expect(headerFailure(defaultsError)?.source == HeaderFieldSource.defaultHeaders.phrase)

        let badName = try server(transport) { $0.defaultHeaders = ["X Bad:Name": "x"] }
        let nameError = await #expect(throws: ConveyError.self) { try await Probe(server: badName, path: counter).send() }
        #expect(headerFailure(nameError)?.name == "X Bad:Name")

        let plain = try server(transport)
        let bodyError = await #expect(throws: ConveyError.self) {
            try await Upload(server: plain, path: counter, contentType: "text/plain\r\nX-Injected: yes").send()
        }
        #expect(headerFailure(bodyError)?.source == HeaderFieldSource.body.phrase)

        let rewrittenError = await #expect(throws: ConveyError.self) { try await RewritingHeaders(server: plain, path: counter).send() }
        #expect(headerFailure(rewrittenError)?.source == HeaderFieldSource.willSendRequest.phrase)
        #expect(headerFailure(rewrittenError)?.name == "X-Trace")

        #expect(try await TestServers.faultCount(counter) == 0)
    }
}
