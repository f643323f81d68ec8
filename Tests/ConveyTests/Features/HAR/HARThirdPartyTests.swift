import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Get: ServerTask {
    let server: ConveyServer
    let path: String
    var items: [URLQueryItem] = []
    var queryItems: [URLQueryItem] { items }
}

private struct Echoed: DownloadingTask {
    typealias DownloadPayload = HTTPBinEcho
    let server: ConveyServer
    let path: String
    var items: [URLQueryItem] = []
    var queryItems: [URLQueryItem] { items }
}

private struct PostLanguages: JSONUploadingTask {
    struct Body: Encodable, Sendable {
        let name: String
        let langs: [String]
    }
    typealias DownloadPayload = HTTPBinEcho
    let server: ConveyServer
    var path: String { "post" }
    var method: HTTPMethod { .post }
    var uploadPayload: Body? { Body(name: "Ada", langs: ["swift", "c"]) }
}

private struct UUIDAnswer: Decodable, Sendable {
    let uuid: String
}

private struct FetchUUID: DownloadingTask {
    typealias DownloadPayload = UUIDAnswer
    let server: ConveyServer
    var path: String { "uuid" }
}

/// A HAR mitmproxy wrote (Tests/Fixtures/har/README.md says how), replayed through the whole pipeline.
@Suite("HAR from another tool")
@ConveyActor
struct HARThirdPartyTests {
    private let file = HARValidator.fixturesFolder.appending(path: "mitmproxy-httpbin.har")

    @Test func mitmproxysCaptureAnswersEveryKindOfRequestItHolds() async throws {
        let fixtures = try HARFixtures(file: file)
        let server = try offlineServer(base: "http://127.0.0.1:8080")

        try await fixtures.scope {
            let query = try await Echoed(server: server, path: "get", items: [URLQueryItem(name: "lang", value: "en"),
                                                                               URLQueryItem(name: "page", value: "2")]).download()
            #expect(query.payload.args == ["page": "2", "lang": "en"])

            let first = try await FetchUUID(server: server).download()
            let second = try await FetchUUID(server: server).download()
            #expect(first.payload.uuid != second.payload.uuid)
            #expect(first.payload.uuid.count == 36)

            let posted = try await PostLanguages(server: server).download()
            #expect(posted.payload.json == .object(["name": .string("Ada"), "langs": .array([.string("swift"), .string("c")])]))

            let gzip = try await Get(server: server, path: "gzip").download()
            #expect(gzip.headerFields["Content-Encoding"] == "gzip")
            #expect(String(decoding: gzip.data, as: UTF8.self).contains(#""gzipped": true"#))

            let bytes = try await Get(server: server, path: "bytes/48", items: [URLQueryItem(name: "seed", value: "7")]).download()
            #expect(bytes.data.count == 48)
            #expect(bytes.headerFields["Content-Type"] == "application/octet-stream")

            let redirected = try await Echoed(server: server, path: "redirect-to", items: [URLQueryItem(name: "url", value: "/get?from=redirect"),
                                                                                          URLQueryItem(name: "status_code", value: "302")]).download()
            #expect(redirected.payload.args == ["from": "redirect"])
            #expect(redirected.request.url.absoluteString == "http://127.0.0.1:8080/get?from=redirect")

            let unavailable = await #expect(throws: HTTPError.self) { try await Get(server: server, path: "status/503").download() }
            #expect(unavailable?.statusCode == 503)
        }
        #expect(fixtures.unansweredEntries.isEmpty)
        #expect(fixtures.skippedEntryCount == 0)
    }

    @Test(.harValidator) func theCommittedCapturePassesTheHARSchema() throws {
        let result = try HARValidator.validate([file])

        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("valid HAR 1.2, 9 entries"))
    }
}
