import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Convey's own request: fields kept in order with repeats from the task to the wire, and
/// Foundation's `URLRequest` only when asked for.
@Suite("Outgoing request")
struct OutgoingRequestTests {
    private let url = URL(string: "https://api.example/items?page=2")!

    @Test func fieldsKeepTheirOrderAndRepeatsWhileSetValueReplacesAName() {
        var request = OutgoingRequest(method: .post, url: url, body: Data("x".utf8))
        request.addValue("a", forHTTPHeaderField: "X-Repeat")
        request.setValue("1", forHTTPHeaderField: "X-One")
        request.addValue("b", forHTTPHeaderField: "x-repeat")
        #expect(request.fields.map(\.name) == ["X-Repeat", "x-repeat", "X-One"])
        #expect(request.value(forHTTPHeaderField: "X-REPEAT") == "a, b")
        request.setValue("only", forHTTPHeaderField: "X-Repeat")
        #expect(request.fields.values(named: "X-Repeat") == ["only"])
        request.setValue(nil, forHTTPHeaderField: "X-One")
        #expect(request.value(forHTTPHeaderField: "X-One") == nil)
    }

    @Test func foundationsRequestIsTheSameRequest() throws {
        var request = OutgoingRequest(method: .put, url: url, body: Data("body".utf8))
        request.addValue("text/plain", forHTTPHeaderField: "Content-Type")
        let foundation = request.urlRequest
        #expect(foundation.httpMethod == "PUT")
        #expect(foundation.url == url)
        #expect(foundation.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        #expect(foundation.httpBody == Data("body".utf8))
        #expect(OutgoingRequest(foundation) == request)
    }

    @Test func aFoundationRequestWithoutAURLIsNoRequest() {
        var foundation = URLRequest(url: url)
        foundation.url = nil
        #expect(OutgoingRequest(foundation) == nil)
    }
}

/// A task's repeated field lines reach the server as separate lines, in order, on the transport
/// that sends Convey's request as it is (URLSession combines them: `URLRequest` holds one value per name).
@Suite("Outgoing request on the wire", .wire)
@ConveyActor
struct OutgoingRequestWireTests {
    private struct RepeatingFields: DownloadingTask {
        let server: ConveyServer
        var path: String { "field-lines" }
        func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
            var changed = request
            changed.addValue("first", forHTTPHeaderField: "X-Repeat")
            changed.addValue("1", forHTTPHeaderField: "X-Between")
            changed.addValue("second", forHTTPHeaderField: "X-Repeat")
            return changed
        }
    }

    #if os(Linux) && canImport(CConveyCurlShim)
    @Test func curlSendsRepeatedFieldsAsSeparateLinesInOrder() async throws {
        let server = ConveyServer(remote: try TestServers.events(), configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        server.transport = CurlTransport()
        let lines = try JSONDecoder().decode([[String]].self, from: try await RepeatingFields(server: server).download().data)
        let sent = lines.filter { $0.first?.lowercased().hasPrefix("x-") == true }
        #expect(sent == [["X-Repeat", "first"], ["X-Repeat", "second"], ["X-Between", "1"]])
    }
    #endif
}
