import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Tagged: ServerTask {
    let server: ConveyServer
    var path: String { "anything" }
    var queryParameters: [String: String]? { ["page": "2"] }
    var queryItems: [URLQueryItem] { [URLQueryItem(name: "tag", value: "a b"), URLQueryItem(name: "tag", value: "c&d")] }
    var headers: Headers {
        get async throws {
            var headers = try await server.headers(for: self)
            headers.add(Header(name: "X-Tag", value: "one"))
            headers.add(Header(name: "X-Tag", value: "two"))
            return headers
        }
    }
}

/// httpbin's echo of a request with repeated names: `args` values are lists for repeated names.
private struct RepeatedEcho: Decodable {
    let args: [String: JSONValue]
    let headers: [String: String]
    let url: String
}

@Suite("Repeated query names and header fields on the wire", .wire)
@ConveyActor
struct RepeatedNamesWireTests {
    @Test func repeatedQueryItemsAndHeaderFieldsReachTheServer() async throws {
        let response = try await Tagged(server: httpbinServer()).download()
        let echo = try JSONDecoder().decode(RepeatedEcho.self, from: response.data)
        #expect(echo.args["tag"] == .array([.string("a b"), .string("c&d")]))
        #expect(echo.args["page"] == .string("2"))
        #expect(echo.url.hasSuffix("/anything?page=2&tag=a%20b&tag=c%26d"))
        // Separate lines (curl) reach httpbin joined with ",", one combined line (URLSession) with ", ".
        #expect(echo.headers["X-Tag"]?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } == ["one", "two"])
    }
}
