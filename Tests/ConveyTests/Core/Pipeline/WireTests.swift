import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Fetch: ServerTask {
    let server: ConveyServer
    let path: String
    var queryParameters: [String: String]?
}

private struct Item: Decodable, Sendable {
    let id: Int
    let name: String
}

private struct FetchItems: DownloadingTask {
    typealias DownloadPayload = [Item]
    let server: ConveyServer
    var path: String { "10k.json" }
}

private struct Compressed: Decodable, Sendable {
    let gzipped: Bool?
    let deflated: Bool?
    let headers: [String: String]
}

@Suite("The pipeline on the wire", .wire)
@ConveyActor
struct WireTests {
    @Test func awkwardQueryValuesRoundTripThroughAServer() async throws {
        let parameters = ["q": "a b&c=d+e/f%g?h#i", "emoji": "😀 ünï", "empty": "", "a&b": "=", "plus": "+"]
        let response = try await Fetch(server: httpbinServer(), path: "get", queryParameters: parameters).download()
        let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: response.data)
        #expect(echo.args == parameters)
    }

    @Test(arguments: ["gzip", "deflate"])
    func compressedResponsesArriveDecoded(encoding: String) async throws {
        let response = try await Fetch(server: httpbinServer(), path: encoding).download()
        let body = try JSONDecoder().decode(Compressed.self, from: response.data)
        #expect(body.gzipped == true || body.deflated == true)
        #expect(response.header("Content-Encoding") == encoding)
    }

    @Test func gzippedStaticFilesDecodeIntoTypes() async throws {
        let server = ConveyServer(remote: Remote(name: "nginx", url: try TestServers.nginx().url, pathPrefix: "gz"),
                                  configuration: ServerConfiguration(echoSink: EchoCapture().sink))
        let response = try await FetchItems(server: server).download()
        #expect(response.header("Content-Encoding") == "gzip")
        #expect(response.payload.count == 400)
        #expect(response.payload.last?.name == "item 399")
    }

    @Test func identityEncodingIsHonouredByTheServer() async throws {
        let server = ConveyServer(remote: Remote(name: "nginx", url: try TestServers.nginx().url, pathPrefix: "gz"),
                                  configuration: ServerConfiguration(enableGZipDownloads: false, echoSink: EchoCapture().sink))
        let response = try await FetchItems(server: server).download()
        #expect(response.header("Content-Encoding") == nil)
        #expect(response.payload.count == 400)
    }

    @Test func switchingTheRemoteMovesTasksToAnotherServer() async throws {
        let server = try httpbinServer()
        server.remote = try TestServers.nginx()
        let fromNginx = try await Fetch(server: server, path: "hello.txt").download()
        #expect(fromNginx.stringResult == "Hello from nginx\n")
        server.remote = try TestServers.httpbin(pathPrefix: "anything")
        let fromHTTPBin = try await Fetch(server: server, path: "hello.txt").download()
        let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: fromHTTPBin.data)
        #expect(echo.url?.hasSuffix("/anything/hello.txt") == true)
    }

    @Test(arguments: [404, 500, 599])
    func realErrorStatusesThrowHTTPErrors(status: Int) async throws {
        let error = await #expect(throws: HTTPError.self) { try await Fetch(server: httpbinServer(), path: "status/\(status)").download() }
        #expect(error?.statusCode == status)
        #expect(error?.url?.path == "/status/\(status)")
    }

    @Test func twoHundredTasksInFlightAllSucceed() async throws {
        let server = try httpbinServer()
        server.remote = try TestServers.nginx()
        let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 {
                group.addTask { try await Fetch(server: server, path: "1k.bin").download().data.count }
            }
            var sizes: [Int] = []
            for try await size in group { sizes.append(size) }
            return sizes
        }
        #expect(sizes.count == 200)
        #expect(sizes.allSatisfy { $0 == 1024 })
    }

    @Test func refusedConnectionIsATransportError() async throws {
        let server = try httpbinServer()
        let closed = try #require(Remote(name: "closed", string: "http://127.0.0.1:9"))
        server.remote = closed
        let error = await #expect(throws: ConveyError.self) { try await Fetch(server: server, path: "x").download() }
        guard let failure = error?.transportFailure else { Issue.record("expected a transport error, got \(String(describing: error))"); return }
        #expect(failure.url?.absoluteString == "http://127.0.0.1:9/x")
        #expect(failure.kind == .cannotConnect)
        #expect(error?.displayMessage == "Couldn't connect to the server. Check your connection and try again.")
    }
}
