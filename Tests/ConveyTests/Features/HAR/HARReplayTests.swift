import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct FixtureUser: Decodable, Sendable, Equatable {
    let id: Int
    let name: String
}

private struct FetchUser: DownloadingTask {
    typealias DownloadPayload = FixtureUser
    let server: ConveyServer
    var id = 42
    var query: [String: String]? = nil
    var path: String { "users/\(id)" }
    var queryParameters: [String: String]? { query }
}

private struct Search: ServerTask {
    let server: ConveyServer
    let items: [URLQueryItem]
    var path: String { "search" }
    var queryItems: [URLQueryItem] { items }
}

private struct FlakyStatus: ServerTask {
    let server: ConveyServer
    var path: String { "status" }
    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { count < 3 ? 0 : nil }
}

private struct CreateUser: JSONUploadingTask {
    struct Body: Encodable, Sendable {
        let name: String
        let role: String
        let password: String
    }
    let server: ConveyServer
    let body: Body
    var path: String { "users" }
    var method: HTTPMethod { .post }
    var uploadPayload: Body? { body }
}

private struct Avatar: ServerTask {
    let server: ConveyServer
    var path: String { "avatar.png" }
}

@Suite("HAR replay")
@ConveyActor
struct HARReplayTests {
    @Test func anEntryAnswersThroughTheWholePipeline() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("users.har")
        try HARText.write([
            HARText.entry("GET", "https://api.example/users/42", body: #"{"id": 42, "name": "Ada"}"#),
            HARText.entry("GET", "https://api.example/users/7", status: 404, body: #"{"error": "no such user"}"#),
        ], to: file)
        let fixtures = try HARFixtures(file: file)
        let server = try offlineServer()

        let response = try await fixtures.scope { try await FetchUser(server: server).download() }
        let missing = await fixtures.scope { await #expect(throws: HTTPError.self) { try await FetchUser(server: server, id: 7).download() } }

        #expect(response.payload == FixtureUser(id: 42, name: "Ada"))
        #expect(response.statusCode == 200)
        #expect(response.headerFields["Content-Type"] == "application/json")
        #expect(response.request.url.absoluteString == "https://api.example/users/42")
        #expect(missing?.statusCode == 404)
        #expect(fixtures.unansweredEntries.isEmpty)
    }

    /// Echo never shows an answer from the file as one from the network: the line names the file.
    @Test func aReplayedAnswerIsEchoedAsReplayed() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("users.har")
        try HARText.write([HARText.entry("GET", "https://api.example/users/42", body: #"{"id": 42, "name": "Ada"}"#)], to: file)
        let echo = EchoCapture()
        let server = try offlineServer { $0.echoSink = echo.sink; $0.defaultEchoStyle = .consoleMinimum }

        _ = try await HARFixtures(file: file).scope { try await FetchUser(server: server).download() }

        #expect(echo.text.contains("GET https://api.example/users/42 → 200 OK"))
        #expect(echo.text.contains("replayed from users.har"))
    }

    /// A replayed answer stands where the network would: the app's exchange steps, which see only
    /// what reaches the network, are not called for it.
    @Test func aReplayedAnswerGoesThroughNoExchangeStep() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("users.har")
        try HARText.write([HARText.entry("GET", "https://api.example/users/42", body: #"{"id": 42, "name": "Ada"}"#)], to: file)
        let log = EventLog()
        let server = try offlineServer { $0.exchangeInterceptors = [LoggingStep(name: "exchange", log: log)] }

        let response = try await HARFixtures(file: file).scope { try await FetchUser(server: server).download() }

        #expect(response.payload == FixtureUser(id: 42, name: "Ada"))
        #expect(log.events.isEmpty)
    }

    @Test func anUnmatchedRequestFailsWithAnErrorNamingIt() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("users.har")
        try HARText.write([HARText.entry("GET", "https://api.example/users/42?page=1", body: "{}")], to: file)
        let fixtures = try HARFixtures(file: file)
        let server = try offlineServer()

        let error = await fixtures.scope {
            await #expect(throws: ConveyError.self) { try await FetchUser(server: server, query: ["page": "2", "token": "s3cret"]).download() }
        }

        guard case .noRecordedAnswer(let request, let named, let reason) = error else {
            Issue.record("expected noRecordedAnswer, got \(String(describing: error))")
            return
        }
        #expect(request == "GET https://api.example/users/42?page=2&token=‹redacted›")
        #expect(named == file.path(percentEncoded: false))
        #expect(reason.contains("GET https://api.example/users/42?page=1"))
        #expect(error?.logDetail.hasPrefix("No entry in \(file.path(percentEncoded: false)) answers GET https://api.example/users/42?page=2&token=‹redacted› — ") == true)
        #expect(error?.logDetail.contains("s3cret") == false)
    }

    @Test func queryOrderDoesNotMatterButEveryParameterDoes() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("search.har")
        try HARText.write([
            HARText.entry("GET", "https://api.example/search?b=2&a=1&a=0", body: "first"),
            HARText.entry("GET", "https://api.example/search?q=caf%C3%A9+au+lait", body: "second"),
        ], to: file)
        let fixtures = try HARFixtures(file: file)
        let server = try offlineServer()

        let reordered = try await fixtures.scope {
            try await Search(server: server, items: [URLQueryItem(name: "a", value: "1"), URLQueryItem(name: "a", value: "0"),
                                                     URLQueryItem(name: "b", value: "2")]).download()
        }
        let encodedOtherwise = try await fixtures.scope {
            try await Search(server: server, items: [URLQueryItem(name: "q", value: "café au lait")]).download()
        }
        let missingOne = await fixtures.scope {
            await #expect(throws: ConveyError.self) {
                try await Search(server: server, items: [URLQueryItem(name: "a", value: "1"), URLQueryItem(name: "b", value: "2")]).download()
            }
        }

        #expect(String(decoding: reordered.data, as: UTF8.self) == "first")
        #expect(String(decoding: encodedOtherwise.data, as: UTF8.self) == "second")
        #expect(missingOne != nil)
    }

    @Test func repeatedEntriesAnswerInOrderEachOnce() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("flaky.har")
        try HARText.write([
            HARText.entry("GET", "https://api.example/status", status: 503, body: "down"),
            HARText.entry("GET", "https://api.example/status", status: 200, body: "up"),
        ], to: file)
        let fixtures = try HARFixtures(file: file)
        let server = try offlineServer()

        let first = try await fixtures.scope { try await FlakyStatus(server: server).download() }
        let again = await fixtures.scope { await #expect(throws: ConveyError.self) { try await FlakyStatus(server: server).download() } }

        #expect(first.attemptNumber == 2)
        #expect(String(decoding: first.data, as: UTF8.self) == "up")
        #expect(again?.logDetail.hasSuffix("— all 2 of its entries have answered already") == true)
    }

    @Test func entriesSharingMethodAndURLAreToldApartByBody() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("create.har")
        try HARText.write([
            HARText.entry("POST", "https://api.example/users", status: 201, body: "admin",
                          requestBody: #"{"name": "Ada", "role": "admin", "password": "‹redacted›"}"#),
            HARText.entry("POST", "https://api.example/users", status: 201, body: "viewer",
                          requestBody: #"{"role":"viewer","name":"Bob","password":"‹redacted›"}"#),
        ], to: file)
        let fixtures = try HARFixtures(file: file)
        let server = try offlineServer()

        let viewer = try await fixtures.scope {
            try await CreateUser(server: server, body: .init(name: "Bob", role: "viewer", password: "hunter2")).download()
        }
        let admin = try await fixtures.scope {
            try await CreateUser(server: server, body: .init(name: "Ada", role: "admin", password: "other")).download()
        }
        let error = await fixtures.scope {
            await #expect(throws: ConveyError.self) {
                try await CreateUser(server: server, body: .init(name: "Eve", role: "admin", password: "x")).download()
            }
        }

        #expect(String(decoding: viewer.data, as: UTF8.self) == "viewer")
        #expect(String(decoding: admin.data, as: UTF8.self) == "admin")
        #expect(error?.logDetail.contains("2 entries have its method and URL, none its body") == true)
    }

    @Test func aBase64BodyReplaysAsItsBytes() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("avatar.har")
        let bytes = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF, 0x10])
        try HARText.write([HARText.entry("GET", "https://api.example/avatar.png", headers: [("Content-Type", "image/png")],
                                         base64Body: bytes.base64EncodedString())], to: file)
        let fixtures = try HARFixtures(file: file)
        let server = try offlineServer()

        let response = try await fixtures.scope { try await Avatar(server: server).download() }

        #expect(response.data == bytes)
    }

    @Test func passThroughSendsWhatTheFileDoesNotAnswerAndWritesNothing() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("users.har")
        try HARText.write([HARText.entry("GET", "https://stub.example/users/42", body: #"{"id": 42, "name": "Ada"}"#)], to: file)
        let before = try Data(contentsOf: file)
        let fixtures = try HARFixtures(file: file, mode: .passThrough)
        let seen = RequestLog()
        let server = try stubServer(.answering(body: #"{"id": 7, "name": "Bob"}"#, seen: seen))

        let fromFile = try await fixtures.scope { try await FetchUser(server: server).download() }
        let fromNetwork = try await fixtures.scope { try await FetchUser(server: server, id: 7).download() }

        #expect(fromFile.payload.name == "Ada")
        #expect(fromNetwork.payload.name == "Bob")
        #expect(seen.requests.map(\.request.url.path) == ["/users/7"])
        #expect(try Data(contentsOf: file) == before)
    }

    @Test func aRequestOutsideTheScopeUsesTheServersTransport() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("users.har")
        try HARText.write([HARText.entry("GET", "https://stub.example/users/42", body: #"{"id": 42, "name": "Ada"}"#)], to: file)
        let fixtures = try HARFixtures(file: file)
        let server = try stubServer(.answering(body: #"{"id": 42, "name": "Stub"}"#))

        let inside = try await fixtures.scope { try await FetchUser(server: server).download() }
        let outside = try await FetchUser(server: server).download()

        #expect(inside.payload.name == "Ada")
        #expect(outside.payload.name == "Stub")
    }

    @Test func anEntryWithoutAResponseReplaysAsItsFailure() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("lost.har")
        var lost = HARText.entry("GET", "https://api.example/status", status: 0)
        lost["_convey"] = ["failure": ["kind": "connectionLost", "message": "Connection lost: reset by peer"]]
        var timedOut = HARText.entry("GET", "https://api.example/users/1", status: 0)
        timedOut["_convey"] = ["failure": ["kind": "timedOut", "message": "Timed out"]]
        try HARText.write([lost, HARText.entry("GET", "https://api.example/status", body: "up"), timedOut], to: file)
        let fixtures = try HARFixtures(file: file)
        let server = try offlineServer()

        let retried = try await fixtures.scope { try await FlakyStatus(server: server).download() }
        let failed = await fixtures.scope {
            await #expect(throws: ConveyError.self) { try await FetchUser(server: server, id: 1).download() }
        }

        #expect(retried.attemptNumber == 2)
        #expect(String(decoding: retried.data, as: UTF8.self) == "up")
        guard case .attemptTimedOut? = failed else {
            Issue.record("expected a timeout, got \(String(describing: failed))")
            return
        }
    }

    @Test func aReplayFileMustExist() throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }

        let error = #expect(throws: ConveyError.self) { try HARFixtures(file: scratch.file("missing.har")) }
        guard case .harFileUnusable(let path, nil, let reason)? = error else {
            Issue.record("expected an unusable file, got \(String(describing: error))")
            return
        }
        #expect(path == scratch.file("missing.har").path(percentEncoded: false))
        #expect(reason == "could not read it: there is no such file")
    }
}
