import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Repeated response fields reach echo and recordings as they came, and so do the exchange's timings.
@Suite("Echo of repeated fields and timings")
@ConveyActor
struct RepeatedFieldEchoTests {
    private struct Fetch: DownloadingTask {
        let server: ConveyServer
        var path: String { "thing" }
        var echoStyle: TaskEchoStyle { [.consoleFull, .recorded] }
    }

    private let fields = Headers(lines: [
        Header(name: "Set-Cookie", value: "a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT"), Header(name: "Age", value: "7200"),
        Header(name: "Set-Cookie", value: "b=2"), Header(name: "Age", value: "0"),
    ])
    private let metrics = ExchangeMetrics(connect: .microseconds(300), firstByte: .milliseconds(2), total: .milliseconds(3),
                                          bytesSent: 0, bytesReceived: 2, httpVersion: "HTTP/1.1", reusedConnection: false)

    private func server(sink: EchoCapture, recorder: TaskRecorder? = nil, metrics: ExchangeMetrics) throws -> ConveyServer {
        let fields = fields
        return try stubServer(StubTransport { request in
            TransportResponse(head: ResponseHead(statusCode: 200, fields: fields, url: request.request.url),
                              data: Data("ok".utf8), metrics: metrics)
        }) {
            $0.echoSink = sink.sink
            $0.recorder = recorder
        }
    }

    @Test func fullEchoListsEachFieldLineInOrderWithSecretsMaskedAndTheTimings() async throws {
        let sink = EchoCapture()
        let response = try await Fetch(server: server(sink: sink, metrics: metrics)).download()
        #expect(response.headerValues("age") == ["7200", "0"])
        #expect(response.headerValues("Set-Cookie") == ["a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT", "b=2"])
        let lines = sink.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let responseLines = lines.filter { $0.hasPrefix("Set-Cookie:") || $0.hasPrefix("Age:") }
        #expect(responseLines == ["Set-Cookie: ‹redacted›", "Age: 7200", "Set-Cookie: ‹redacted›", "Age: 0"])
        let timings = try #require(lines.first { $0.hasPrefix("[Convey] ⏱") })
        #expect(timings.contains("dns – · connect "))
        #expect(timings.contains("tls – · first byte "))
        #expect(timings.hasSuffix("↑0 B ↓2 B · HTTP/1.1 · new connection"))
    }

    @Test func noTimingsLineWhenTheTransportMeasuredNothing() async throws {
        let sink = EchoCapture()
        try await Fetch(server: server(sink: sink, metrics: ExchangeMetrics())).send()
        #expect(sink.text.contains("[Convey] ◀ 200"))
        #expect(!sink.text.contains("⏱"))
    }

    @Test func recordsKeepRepeatedFieldsInOrderAndTheMetrics() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-records-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let recorder = TaskRecorder(folder: folder)
        try await Fetch(server: server(sink: EchoCapture(), recorder: recorder, metrics: metrics)).send()
        let records = await recorder.records()
        let record = try #require(records.first)
        #expect(record.responseHeaders.map { $0.name } == ["Set-Cookie", "Age", "Set-Cookie", "Age"])
        #expect(record.responseHeaders.filter { $0.name == "Age" }.map { $0.value } == ["7200", "0"])
        #expect(record.responseHeaders.filter { $0.name == "Set-Cookie" }.allSatisfy { $0.value == Redaction.mask })
        #expect(record.metrics == metrics)
    }
}
