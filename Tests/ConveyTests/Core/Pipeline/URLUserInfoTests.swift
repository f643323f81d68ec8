import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Fetch: DownloadingTask {
    typealias DownloadPayload = Data
    let server: ConveyServer
    var path: String
    var ownAuthorization: String?
    var headers: Headers {
        get async throws {
            var headers = try await server.headers(for: self)
            if let ownAuthorization { headers["Authorization"] = ownAuthorization }
            return headers
        }
    }
}

/// A remote URL's `user:password` goes out as `Authorization: Basic`, by Convey, on every transport.
@Suite("URL userinfo becomes Basic credentials")
@ConveyActor
struct URLUserInfoTests {
    @Test func userinfoLeavesTheURLAndBecomesBasicAuthorization() async throws {
        let seen = RequestLog()
        let remote = try #require(Remote(name: "u", string: "https://alice:s3%20cret@stub.example"))
        let server = ConveyServer(remote: remote,
                                  configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        server.transport = StubTransport.answering(seen: seen)

        _ = try await Fetch(server: server, path: "x").download()
        _ = try await Fetch(server: server, path: "y", ownAuthorization: "Bearer mine").download()

        let requests = seen.requests.map(\.request)
        #expect(requests.map { $0.url.absoluteString } == ["https://stub.example/x", "https://stub.example/y"])
        #expect((try requests.required(0)).value(forHTTPHeaderField: "Authorization") == "Basic " + Data("alice:s3 cret".utf8).base64EncodedString())
        #expect((try requests.required(1)).value(forHTTPHeaderField: "Authorization") == "Bearer mine")
    }
}

@Suite("URL userinfo on the wire", .wire)
@ConveyActor
struct URLUserInfoWireTests {
    @Test func bothTransportsAuthenticateWithTheUserinfo() async throws {
        let base = try #require(TestServers.httpbinURL)
        var components = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
        components.user = "alice"
        components.password = "s3cret"
        let server = ConveyServer(remote: Remote(name: "u", url: try #require(components.url)),
                                  configuration: ServerConfiguration(reportBadHTTPStatusAsError: false, echoSink: EchoCapture().sink))

        let response = try await Fetch(server: server, path: "basic-auth/alice/s3cret").download()

        #expect(response.statusCode == 200)
        #expect(response.request.url.user == nil)
    }
}
