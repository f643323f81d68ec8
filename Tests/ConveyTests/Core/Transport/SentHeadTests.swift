import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// `TransportRequest.capturesSentHead` and `ExchangeMetrics.sentHead`: each real transport reports
/// the head the server received, the fields it added itself included.
@Suite("The request head as sent", .wire)
struct SentHeadWireTests {
    /// Sends `request` asking for its head, and returns the head reported and what httpbin received.
    private func exchange(_ kind: TransportKind, _ request: OutgoingRequest, bodyFile: URL? = nil) async throws -> (head: String, received: HTTPBinEcho) {
        var transportRequest = TransportRequest(request: request, bodyFile: bodyFile, timeout: .seconds(20))
        transportRequest.capturesSentHead = true
        let response = try await kind.make().send(transportRequest)
        let head = try #require(response.metrics.sentHead, "\(kind) reported no head")
        return (head, try JSONDecoder().decode(HTTPBinEcho.self, from: response.data))
    }

    /// The head's fields by name, as httpbin reports those it received (one value per name).
    private func fields(of head: String) throws -> [String: String] {
        let lines = head.components(separatedBy: "\r\n")
        #expect(lines.suffix(2) == ["", ""], "the head ends with its empty line: \(head.debugDescription)")
        var fields: [String: String] = [:]
        for line in lines.dropFirst() where !line.isEmpty {
            let colon = try #require(line.firstIndex(of: ":"), "\(line)")
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }

    @Test(arguments: TransportKind.allCases)
    func aGetReportsTheRequestLineAndEveryFieldTheServerReceived(_ kind: TransportKind) async throws {
        var request = OutgoingRequest(url: try TestServers.httpbin("/anything/a%20b?page=2&q=x"))
        request.fields = ["User-Agent": "ConveyTests/1.0", "Authorization": "Bearer s3cret", "X-Trace": "7"]
        let (head, received) = try await exchange(kind, request)

        #expect(head.hasPrefix("GET /anything/a%20b?page=2&q=x HTTP/1.1\r\n"), "\(head)")
        let sent = try fields(of: head)
        #expect(sent == received.headers, "\(kind): reported \(sent), received \(received.headers)")
        // The fields libcurl adds, which Convey's request does not hold, are there as received.
        #expect(sent["Host"] == received.headers["Host"] && sent["Host"] != nil)
        #expect(sent["Accept"] == "*/*")
        #expect(sent["Authorization"] == "Bearer s3cret", "the head is reported unmasked: whoever shows it masks it")
    }

    @Test(arguments: TransportKind.allCases)
    func bodiesAndOtherMethodsReportTheFieldsTheyWentOutWith(_ kind: TransportKind) async throws {
        let url = try TestServers.httpbin("/anything")
        var form = OutgoingRequest(method: .post, url: url, body: Data("a=1&b=2".utf8))
        form.fields = ["User-Agent": "ConveyTests/1.0"]
        var json = OutgoingRequest(method: .patch, url: url, body: Data(#"{"a":1}"#.utf8))
        json.fields = ["User-Agent": "ConveyTests/1.0", "Content-Type": "application/json", "Accept-Encoding": "identity"]
        var empty = OutgoingRequest(method: .delete, url: url)
        empty.fields = ["User-Agent": "ConveyTests/1.0"]
        for request in [form, json, empty] {
            let (head, received) = try await exchange(kind, request)
            #expect(head.hasPrefix("\(request.method.rawValue) /anything HTTP/1.1\r\n"), "\(head)")
            #expect(try fields(of: head) == received.headers, "\(kind) \(request.method.rawValue)")
        }

        let file = FileManager.default.temporaryDirectory.appending(path: "convey-sent-head-\(UUID().uuidString)")
        try Data("from a file".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var upload = OutgoingRequest(method: .put, url: url)
        upload.fields = ["User-Agent": "ConveyTests/1.0", "Content-Type": "text/plain"]
        let (head, received) = try await exchange(kind, upload, bodyFile: file)
        #expect(try fields(of: head) == received.headers, "\(kind) PUT from a file")
        #expect(received.headers["Content-Length"] == "11")
    }

    @Test(arguments: TransportKind.allCases)
    func withoutTheFlagNoHeadIsReported(_ kind: TransportKind) async throws {
        let response = try await kind.make().send(try TestServers.httpbin("/get"))
        #expect(response.head.statusCode == 200)
        #expect(response.metrics.sentHead == nil)
    }

    #if os(Linux) && canImport(CConveyCurlShim)
    @Test func curlReportsTheLastHeadOfAHandleReusedWithAndWithoutTheFlag() async throws {
        // One transport, so the handles are reused: capturing on, off, and on again.
        let transport = CurlTransport()
        for (path, captures) in [("/get?n=1", true), ("/get?n=2", false), ("/get?n=3", true)] {
            var request = TransportRequest(request: OutgoingRequest(url: try TestServers.httpbin(path)), timeout: .seconds(20))
            request.capturesSentHead = captures
            let head = try await transport.send(request).metrics.sentHead
            #expect(head.map { $0.hasPrefix("GET \(path) HTTP/1.1\r\n") } ?? !captures, "\(path): \(head ?? "none")")
            #expect((head == nil) == !captures)
        }
    }
    #endif
}

@Suite("ExchangeMetrics.sentHead")
struct SentHeadMetricsTests {
    @Test func theHeadIsNeverEncodedNorCountedAsMeasured() throws {
        var metrics = ExchangeMetrics()
        metrics.sentHead = "GET / HTTP/1.1\r\nAuthorization: Bearer s3cret\r\n\r\n"
        #expect(metrics.isEmpty, "a head alone is nothing measured")
        #expect(!metrics.description.contains("s3cret"))

        metrics.httpVersion = "HTTP/1.1"
        let encoded = String(decoding: try JSONEncoder().encode(metrics), as: UTF8.self)
        #expect(!encoded.contains("s3cret") && !encoded.contains("sentHead"), "\(encoded)")
        let decoded = try JSONDecoder().decode(ExchangeMetrics.self, from: Data(encoded.utf8))
        #expect(decoded.httpVersion == "HTTP/1.1")
        #expect(decoded.sentHead == nil)
    }
}
