import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Redirected: ServerTask {
    let server: ConveyServer
    let path: String
    var queryParameters: [String: String]?
    var follows: Bool?
    var followsRedirects: Bool { follows ?? server.configuration.followsRedirects }
}

/// A task whose request carries header fields, to see which of them reach a redirect's target.
private struct Forwarded: ServerTask {
    let server: ConveyServer
    var path: String { "redirect-to" }
    let queryParameters: [String: String]?
    let fields: Headers
    var headers: Headers { get async throws { fields } }
}

/// A JSON upload to httpbin's `/redirect-to`, which answers `status` pointing at `/anything`.
private struct RedirectedUpload: JSONUploadingTask {
    let server: ConveyServer
    let method: HTTPMethod
    let status: Int
    var path: String { "redirect-to" }
    var queryParameters: [String: String]? { ["url": "/anything", "status_code": String(status)] }
    var uploadPayload: [String: String]? { ["note": "kept"] }
}

/// Following redirects, or not, on each real transport against the local httpbin: the pipeline
/// follows them, each hop a send of its own; the transports return them as responses.
@Suite("Redirects on the wire", .wire)
@ConveyActor
struct RedirectWireTests {
    private func server(_ kind: TransportKind, configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> ConveyServer {
        let server = try httpbinServer(configure: configure)
        server.transport = kind.make()
        return server
    }

    @Test(arguments: TransportKind.allCases)
    func aTransportReturnsTheRedirectAsItsResponse(_ kind: TransportKind) async throws {
        let response = try await kind.make().send(try TestServers.httpbin("/redirect-to?url=/get%3Fto%3Dthere&status_code=302"))
        #expect(response.head.statusCode == 302)
        #expect(response.head.fields["Location"] == "/get?to=there")
    }

    @Test(arguments: TransportKind.allCases)
    func seeOtherTurnsPOSTIntoABodylessGET(_ kind: TransportKind) async throws {
        let response = try await RedirectedUpload(server: server(kind), method: .post, status: 303).download()
        let echoed = try JSONDecoder().decode(HTTPBinEcho.self, from: response.data)
        #expect(echoed.method == "GET")
        #expect(echoed.data == "")
    }

    @Test(arguments: TransportKind.allCases)
    func movedAndFoundTurnPOSTIntoGETButKeepPUT(_ kind: TransportKind) async throws {
        for status in [301, 302] {
            let post = try JSONDecoder().decode(HTTPBinEcho.self, from: try await RedirectedUpload(
                server: server(kind), method: .post, status: status).download().data)
            #expect(post.method == "GET")
            let put = try JSONDecoder().decode(HTTPBinEcho.self, from: try await RedirectedUpload(
                server: server(kind), method: .put, status: status).download().data)
            #expect(put.method == "PUT")
            #expect(put.json == .object(["note": .string("kept")]))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func temporaryAndPermanentRedirectsKeepMethodAndBody(_ kind: TransportKind) async throws {
        for status in [307, 308] {
            let echoed = try JSONDecoder().decode(HTTPBinEcho.self, from: try await RedirectedUpload(
                server: server(kind), method: .post, status: status).download().data)
            #expect(echoed.method == "POST")
            #expect(echoed.json == .object(["note": .string("kept")]))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func moreRedirectsThanTheLimitFail(_ kind: TransportKind) async throws {
        let server = try server(kind)
        let error = await #expect(throws: ConveyError.self) { try await Redirected(server: server, path: "redirect/21").download() }
        guard let failure = error?.transportFailure else {
            Issue.record("not a transport failure: \(String(describing: error))")
            return
        }
        #expect(failure.kind == .redirectRefused)
        #expect(failure.reason.contains("more than 20 redirects"))
        #expect(try await Redirected(server: server, path: "redirect/20").download().statusCode == 200)
    }

    @Test(arguments: TransportKind.allCases)
    func aCookieSetByARedirectGoesOutWithTheNextHop(_ kind: TransportKind) async throws {
        let response = try await Redirected(server: server(kind), path: "cookies/set", queryParameters: ["hop": "one"]).download()
        #expect(response.httpResponse.url?.path() == "/cookies")
        let cookies = try JSONDecoder().decode([String: [String: String]].self, from: response.data)
        #expect(cookies["cookies"] == ["hop": "one"])
    }

    @Test(arguments: TransportKind.allCases)
    func aFileDownloadFollowsTheRedirect(_ kind: TransportKind) async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-redirect-wire-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appending(path: "got.json")
        let response = try await Redirected(server: server(kind), path: "redirect/2").download(to: destination)
        #expect(response.statusCode == 200)
        let echoed = try JSONDecoder().decode(HTTPBinEcho.self, from: try Data(contentsOf: destination))
        #expect(echoed.url?.hasSuffix("/get") == true)
    }

    @Test(arguments: TransportKind.streaming)
    func aStreamFollowsTheRedirect(_ kind: TransportKind) async throws {
        let response = try await Redirected(server: server(kind), path: "redirect-to",
                                            queryParameters: ["url": "/stream/3", "status_code": "302"]).stream()
        var lines = 0
        for try await _ in response.payload.lines { lines += 1 }
        #expect(response.statusCode == 200)
        #expect(response.payload.url?.path() == "/stream/3")
        #expect(lines == 3)
    }

    @Test(arguments: TransportKind.allCases)
    func followingStaysTheDefault(_ kind: TransportKind) async throws {
        let response = try await Redirected(server: server(kind), path: "redirect/2").download()
        #expect(response.statusCode == 200)
        #expect(response.httpResponse.url?.path() == "/get")
    }

    @Test(arguments: TransportKind.allCases)
    func aTaskThatDoesNotFollowGetsThe3xxBackWithItsLocation(_ kind: TransportKind) async throws {
        let server = try server(kind)
        let response = try await Redirected(server: server, path: "redirect-to",
                                            queryParameters: ["url": "/anything/next", "status_code": "307"], follows: false).download()
        #expect(response.statusCode == 307)
        #expect(response.responseType == .redirect)
        #expect(response.header("Location") == "/anything/next")
        // The same server still follows for tasks that do not say otherwise.
        #expect(try await Redirected(server: server, path: "redirect/1").download().statusCode == 200)
    }

    @Test(arguments: TransportKind.allCases)
    func aCachingServerDoesNotFollowForATaskThatSaysNotTo(_ kind: TransportKind) async throws {
        let server = try server(kind) { $0.cache = DataCache() }
        let response = try await Redirected(server: server, path: "redirect/2", follows: false).download()
        #expect(response.statusCode == 302)
        #expect(response.header("Location") == "/relative-redirect/1")
        #expect(try await Redirected(server: server, path: "redirect/2").download().statusCode == 200)
    }

    @Test(arguments: TransportKind.allCases)
    func aServerThatDoesNotFollowStopsAtTheFirstHop(_ kind: TransportKind) async throws {
        let server = try server(kind) { $0.followsRedirects = false }
        let response = try await Redirected(server: server, path: "redirect/3").download()
        #expect(response.statusCode == 302)
        #expect(response.header("Location") == "/relative-redirect/2")
        // A task can still ask to follow.
        #expect(try await Redirected(server: server, path: "redirect/3", follows: true).download().statusCode == 200)
    }

    @Test(arguments: TransportKind.allCases)
    func aStatusRuleCanStillThrowForAnUnfollowedRedirect(_ kind: TransportKind) async throws {
        struct Strict: ServerTask {
            let server: ConveyServer
            var path: String { "redirect/1" }
            var followsRedirects: Bool { false }
            var statusRule: StatusRule { .standard.throwing(302) }
        }
        let error = await #expect(throws: HTTPError.self) { try await Strict(server: server(kind)).download() }
        #expect(error?.statusCode == 302)
    }
    /// The header fields a redirect from httpbin to `target` delivered there, as the echo shows them;
    /// `credentials` names credential fields beyond the standard ones, as a server's `redaction` does.
    private func fieldsArriving(at target: String, via kind: TransportKind, extra: Headers = [],
                                credentials: Redaction = .standard) async throws -> [String: String] {
        let server = try server(kind) { $0.redaction = credentials }
        var fields = Headers()
        for header in CredentialFields.sent { fields[header.name] = header.value }
        for header in extra { fields[header.name] = header.value }
        let response = try await Forwarded(server: server, queryParameters: ["url": target, "status_code": "302"], fields: fields).download()
        return try Self.echoedFields(response.data)
    }

    @Test(arguments: TransportKind.allCases)
    func aHeaderTheServerNamesAsACredentialIsDroppedOnARedirectToAnotherOrigin(_ kind: TransportKind) async throws {
        let elsewhere = try #require(TestServers.eventsURL).absoluteString + "/headers"
        var credentials = Redaction.standard
        credentials.headerNames.insert("x-tenant")
        let arrived = try await fieldsArriving(at: elsewhere, via: kind, extra: ["X-Tenant": "alice", "X-Region": "eu"],
                                               credentials: credentials)
        #expect(arrived["x-tenant"] == nil)
        #expect(arrived["x-region"] == "eu")
        let sameOrigin = try await fieldsArriving(at: "/headers", via: kind, extra: ["X-Tenant": "alice"], credentials: credentials)
        #expect(sameOrigin["x-tenant"] == "alice")
    }

    /// The fields an echo reported: httpbin's `{"headers": …}` or the event server's `data: {…}`.
    private static func echoedFields(_ body: Data) throws -> [String: String] {
        let text = String(decoding: body, as: UTF8.self)
        if text.hasPrefix("data: ") {
            let json = text.dropFirst("data: ".count).prefix { $0 != "\n" }
            return try JSONDecoder().decode([String: String].self, from: Data(json.utf8))
        }
        let fields = try JSONDecoder().decode(HTTPBinEcho.self, from: body).headers
        return Dictionary(fields.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
    }

    @Test(arguments: TransportKind.allCases)
    func credentialsAreDroppedOnARedirectToAnotherOrigin(_ kind: TransportKind) async throws {
        let elsewhere = try #require(TestServers.eventsURL).absoluteString + "/headers"
        let arrived = try await fieldsArriving(at: elsewhere, via: kind)
        #expect(arrived["x-other"] == "kept")
        #expect(CredentialFields.credentialNames.filter { arrived[$0] != nil } == [])
    }

    @Test(arguments: TransportKind.allCases)
    func credentialsStayOnARedirectWithinTheOrigin(_ kind: TransportKind) async throws {
        let arrived = try await fieldsArriving(at: "/headers", via: kind)
        #expect(arrived["x-other"] == "kept")
        #expect(arrived["authorization"] == "Bearer secret-token")
        #expect(arrived["x-api-key"] == "secret-key")
    }
}
