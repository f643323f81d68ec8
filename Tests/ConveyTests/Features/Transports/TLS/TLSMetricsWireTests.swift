#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// What `CurlTransport` reports about a TLS connection: its version, its reuse and whether the
/// certificate was verified, against the test CA's nginx servers.
@Suite("TLS metrics on the wire", .wire)
@ConveyActor
struct TLSMetricsWireTests {
    @Test func theTLSVersionIsTheOneTheServerNegotiated() async throws {
        let transport = CurlTransport(configuration: .init(tls: try TLSTestServers.trustingTheCA()))
        let modern = try await transport.send(try TLSTestServers.trusted("/hello.txt"))
        #expect(modern.metrics.tlsVersion == "TLSv1.3")
        #expect(modern.head.fields["X-TLS-Protocol"] == "TLSv1.3")
        let older = try await transport.send(try TLSTestServers.url("CONVEY_TLS12_ONLY_URL", "/hello.txt"))
        #expect(older.metrics.tlsVersion == "TLSv1.2")
        #expect(older.metrics.certificateVerified == true)
    }

    @Test func aSecondRequestReusesTheConnectionAndStillReportsItsTLSVersion() async throws {
        let transport = CurlTransport(configuration: .init(tls: try TLSTestServers.trustingTheCA()))
        let first = try await transport.send(try TLSTestServers.trusted("/hello.txt"))
        let second = try await transport.send(try TLSTestServers.trusted("/hello.txt"))
        #expect(first.metrics.reusedConnection == false)
        #expect(second.metrics.reusedConnection == true)
        #expect(second.metrics.tlsVersion == "TLSv1.3")
        #expect(second.metrics.httpVersion == "HTTP/2")
    }

    @Test func turningVerificationOffIsReportedOnEveryExchange() async throws {
        let transport = CurlTransport(configuration: .init(tls: TLSConfiguration(disablesCertificateVerificationInsecurely: true)))
        for _ in 0..<2 {
            let response = try await transport.send(try TLSTestServers.url("CONVEY_TLS_EXPIRED_URL", "/hello.txt"))
            #expect(response.head.statusCode == 200)
            #expect(response.metrics.certificateVerified == false)
            #expect(response.metrics.description.hasSuffix("⚠ TLS verification OFF"))
        }
    }

    @Test func plainHTTPReportsNoTLS() async throws {
        let response = try await CurlTransport().send(try TLSTestServers.url("CONVEY_NGINX_URL", "/hello.txt"))
        #expect(response.metrics.tlsVersion == nil)
        #expect(response.metrics.certificateVerified == nil)
    }

    @Test func anInsecureServersEchoWarnsOnEveryLine() async throws {
        let sink = EchoCapture()
        var configuration = ServerConfiguration(reportBadHTTPStatusAsError: false, echoSink: sink.sink)
        configuration.builtInTransport = .curl
        configuration.tls.disablesCertificateVerificationInsecurely = true
        let server = ConveyServer(remote: Remote(name: "expired", url: try TLSTestServers.url("CONVEY_TLS_EXPIRED_URL", "")),
                                  configuration: configuration)
        _ = try await Probe(server: server).download()
        let lines = sink.text.split(separator: "\n").filter { $0.hasPrefix("[Convey] ⏱") || $0.hasPrefix("[Convey] GET") }
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.contains("⚠ TLS verification OFF") })
    }

    private struct Probe: ServerTask {
        let server: ConveyServer
        var path: String { "hello.txt" }
        var echoStyle: TaskEchoStyle { .consoleFull }
    }
}
#endif
