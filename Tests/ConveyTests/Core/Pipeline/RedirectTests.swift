import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Convey's one redirect policy (URLSession's rules), which the pipeline applies on every transport.
struct RedirectTests {
    private let origin = URL(string: "https://api.example/v1/items?page=2")!

    private func request(_ method: HTTPMethod, body: String? = nil, headers: [String: String] = [:]) -> OutgoingRequest {
        OutgoingRequest(method: method, url: origin, fields: Headers(headers), body: body.map { Data($0.utf8) })
    }

    private func response(_ status: Int, location: String?) -> ResponseHead {
        ResponseHead(statusCode: status, fields: location.map { ["Location": $0] } ?? [:], url: origin)
    }

    private func next(_ status: Int, _ location: String?, _ request: OutgoingRequest,
                      credentials: Redaction = .none) throws -> Redirect.Hop? {
        try Redirect.next(after: response(status, location: location), request: request, credentials: credentials)
    }

    @Test func seeOtherTurnsAnyMethodButHEADIntoABodylessGET() throws {
        for method: HTTPMethod in ["POST", "PUT", "DELETE"] {
            let hop = try #require(try next(303, "/done", request(method, body: "x", headers: ["Content-Type": "text/plain"])))
            #expect(hop.request.method == .get)
            #expect(hop.request.body == nil)
            #expect(hop.request.value(forHTTPHeaderField: "Content-Type") == nil)
            #expect(!hop.resendsBody)
            #expect(hop.request.url.absoluteString == "https://api.example/done")
        }
        let head = try #require(try next(303, "/done", request("HEAD")))
        #expect(head.request.method == .head)
    }

    @Test func movedAndFoundTurnOnlyPOSTIntoGET() throws {
        for status in [301, 302] {
            let post = try #require(try next(status, "next", request("POST", body: "x")))
            #expect(post.request.method == .get)
            #expect(post.request.url.absoluteString == "https://api.example/v1/next")
            let put = try #require(try next(status, "next", request("PUT", body: "x")))
            #expect(put.request.method == .put)
            #expect(put.request.body == Data("x".utf8))
            #expect(put.resendsBody)
        }
    }

    @Test func temporaryAndPermanentRedirectsKeepMethodAndBody() throws {
        for status in [307, 308] {
            let hop = try #require(try next(status, "https://api.example/other", request("POST", body: "x")))
            #expect(hop.request.method == .post)
            #expect(hop.request.body == Data("x".utf8))
            #expect(hop.resendsBody)
        }
    }

    @Test func credentialsStayWithTheirOrigin() throws {
        let headers = ["Authorization": "Bearer secret", "Cookie": "session=1", "Proxy-Authorization": "Basic eA==",
                       "X-API-Key": "k", "X-Auth-Token": "t", "X-Tenant": "alice", "X-Other": "kept"]
        var credentials = Redaction.none
        credentials.headerNames.insert("x-tenant")
        let sameOrigin = try #require(try next(302, "https://API.example:443/x", request("GET", headers: headers), credentials: credentials))
        #expect(sameOrigin.request.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        #expect(sameOrigin.request.value(forHTTPHeaderField: "X-Tenant") == "alice")
        let elsewhere = try #require(try next(302, "https://cdn.example/x", request("GET", headers: headers), credentials: credentials))
        for name in ["Authorization", "Cookie", "Proxy-Authorization", "X-API-Key", "X-Auth-Token", "X-Tenant"] {
            #expect(elsewhere.request.value(forHTTPHeaderField: name) == nil, "\(name) went to another origin")
        }
        #expect(elsewhere.request.value(forHTTPHeaderField: "X-Other") == "kept")
        let otherPort = try #require(try next(302, "https://api.example:8443/x", request("GET", headers: headers)))
        #expect(otherPort.request.value(forHTTPHeaderField: "X-API-Key") == nil)
    }

    @Test func finalResponsesAreNotFollowed() throws {
        #expect(try next(200, "/x", request("GET")) == nil)
        #expect(try next(304, "/x", request("GET")) == nil)
        #expect(try next(302, nil, request("GET")) == nil)
    }

    @Test func aTargetThatIsNotHTTPIsRefused() throws {
        for location in ["ftp://files.example/x", "file:///etc/passwd", "gopher://g.example/"] {
            let error = #expect(throws: ConveyError.self) { try next(302, location, request("GET")) }
            guard let failure = error?.transportFailure else {
                Issue.record("\(location): \(String(describing: error))")
                continue
            }
            #expect(failure.kind == .redirectRefused)
        }
    }
}
