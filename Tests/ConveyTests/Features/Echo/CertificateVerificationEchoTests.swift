import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Probe: ServerTask {
    let server: ConveyServer
    var style: TaskEchoStyle
    var path: String { "probe" }
    var echoStyle: TaskEchoStyle { style }
}

/// Echo and records say loudly when a request went out with certificate verification turned off.
@Suite("Echo of certificate verification")
@ConveyActor
struct CertificateVerificationEchoTests {
    let sink = EchoCapture()

    /// A stub server answering with `metrics`, recording into `recorder`.
    private func server(metrics: ExchangeMetrics, recorder: TaskRecorder? = nil) throws -> ConveyServer {
        let transport = StubTransport { request in
            var response = TransportResponse(url: request.request.url, body: Data("ok".utf8))
            response.metrics = metrics
            return response
        }
        return try stubServer(transport) {
            $0.echoSink = sink.sink
            $0.recorder = recorder
        }
    }

    private func lines(containing text: String) -> [Substring] {
        sink.text.split(separator: "\n").filter { $0.contains(text) }
    }

    @Test func theSummaryLineAndTheMetricsLineWarnWhenVerificationWasOff() async throws {
        let metrics = ExchangeMetrics(httpVersion: "HTTP/2", reusedConnection: false, tlsVersion: "TLSv1.3", certificateVerified: false)
        try await Probe(server: server(metrics: metrics), style: .consoleFull).send()
        #expect(lines(containing: "[Convey] GET https://stub.example/probe → 200 OK").first?.hasSuffix(" · ⚠ TLS verification OFF") == true)
        #expect(lines(containing: "[Convey] ⏱").first?.hasSuffix("HTTP/2 · TLSv1.3 · new connection · ⚠ TLS verification OFF") == true)
    }

    @Test func aVerifiedExchangeShowsNoWarning() async throws {
        let metrics = ExchangeMetrics(httpVersion: "HTTP/2", tlsVersion: "TLSv1.3", certificateVerified: true)
        try await Probe(server: server(metrics: metrics), style: .consoleFull).send()
        #expect(sink.text.contains("[Convey] GET https://stub.example/probe → 200 OK"))
        #expect(!sink.text.contains("verification"))
    }

    @Test func theRecordSaysVerificationWasOffAndAVerifiedOneSaysNothing() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let recorder = TaskRecorder(folder: folder.appending(path: "records"))
            try await Probe(server: server(metrics: ExchangeMetrics(certificateVerified: false), recorder: recorder), style: .recorded).send()
            try await Probe(server: server(metrics: ExchangeMetrics(certificateVerified: true), recorder: recorder), style: .recorded).send()
            await recorder.flush()
            let records = await recorder.records()
            #expect(records.count == 2)
            #expect(records.filter { $0.certificateVerificationOff == true }.count == 1)
            #expect(records.filter { $0.certificateVerificationOff == nil }.count == 1)
            let json = try RecordedTask.jsonText(records)
            #expect(json.components(separatedBy: #""certificateVerificationOff" : true"#).count == 2)
        }
    }

    @Test func aFailedAttemptOnAnInsecureBuiltInTransportWarnsToo() async throws {
        var configuration = ServerConfiguration(echoSink: sink.sink)
        configuration.tls.disablesCertificateVerificationInsecurely = true
        // Nothing listens on port 1: the attempt fails before any response.
        let remote = try #require(Remote(name: "closed", string: "https://127.0.0.1:1"))
        let server = ConveyServer(remote: remote, configuration: configuration)
        await #expect(throws: ConveyError.self) { try await Probe(server: server, style: .consoleMinimum).send() }
        #expect(lines(containing: "[Convey] GET https://127.0.0.1:1/probe").first?.contains(" · ⚠ TLS verification OFF ✗ ") == true)
    }

    @Test func theMetricsDescriptionNamesTheTLSVersionAndTheWarningOnlyWhenOff() {
        let verified = ExchangeMetrics(httpVersion: "HTTP/1.1", reusedConnection: true, tlsVersion: "TLSv1.2", certificateVerified: true)
        #expect(verified.description.hasSuffix(" · HTTP/1.1 · TLSv1.2 · reused"))
        var off = verified
        off.certificateVerified = false
        #expect(off.description.hasSuffix(" · HTTP/1.1 · TLSv1.2 · reused · ⚠ TLS verification OFF"))
    }
}
