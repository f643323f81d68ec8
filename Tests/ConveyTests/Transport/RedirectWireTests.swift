import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Convey

private struct Redirected: ServerTask {
    let server: ConveyServer
    let path: String
    var queryParameters: [String: String]?
    var follows: Bool?
    var followsRedirects: Bool { follows ?? server.configuration.followsRedirects }
}

/// Following redirects, or not, on each real transport against the local httpbin.
@Suite("Redirects on the wire", .wire)
@ConveyActor
struct RedirectWireTests {
    private func server(_ kind: TransportKind, configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> ConveyServer {
        let server = try httpbinServer(configure: configure)
        server.transport = kind.make()
        return server
    }

    @Test(arguments: TransportKind.allCases)
    func aTransportRequestCanStopAtTheRedirect(_ kind: TransportKind) async throws {
        let request = OutgoingRequest(url: try TestServers.httpbin("/redirect-to?url=/get%3Fto%3Dthere&status_code=302"))
        var exchange = TransportRequest(request: request, timeout: .seconds(20))
        exchange.followsRedirects = false
        let response = try await kind.make().send(exchange)
        #expect(response.head.statusCode == 302)
        #expect(response.head.fields["Location"] == "/get?to=there")
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
                                credentials: Redaction = .none) async throws -> [String: String] {
        var request = OutgoingRequest(url: try TestServers.httpbin("/redirect-to?url=\(target)&status_code=302"))
        for header in CredentialFields.sent { request.setValue(header.value, forHTTPHeaderField: header.name) }
        for header in extra { request.setValue(header.value, forHTTPHeaderField: header.name) }
        var exchange = TransportRequest(request: request, timeout: .seconds(20))
        exchange.credentialFields = credentials
        let body = try await kind.make().send(exchange).data
        return try Self.echoedFields(body)
    }

    @Test(arguments: TransportKind.allCases)
    func aHeaderTheServerNamesAsACredentialIsDroppedOnARedirectToAnotherOrigin(_ kind: TransportKind) async throws {
        let elsewhere = try #require(TestServers.eventsURL).absoluteString + "/headers"
        var credentials = Redaction.none
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
