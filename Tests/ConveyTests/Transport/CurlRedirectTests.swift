#if canImport(CConveyCurlShim)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Convey

/// URLSession's redirect policy as CurlTransport applies it.
struct CurlRedirectTests {
    private let origin = URL(string: "https://api.example/v1/items?page=2")!

    private func request(_ method: String, body: String? = nil, headers: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: origin)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    private func response(_ status: Int, location: String?) -> ResponseHead {
        ResponseHead(statusCode: status, fields: location.map { ["Location": $0] } ?? [:], url: origin)
    }

    @Test func seeOtherTurnsAnyMethodButHEADIntoABodylessGET() throws {
        for method in ["POST", "PUT", "DELETE"] {
            let hop = try #require(try CurlRedirect.nextHop(
                after: response(303, location: "/done"),
                request: request(method, body: "x", headers: ["Content-Type": "text/plain"]), url: origin))
            #expect(hop.request.httpMethod == "GET")
            #expect(hop.request.httpBody == nil)
            #expect(hop.request.value(forHTTPHeaderField: "Content-Type") == nil)
            #expect(!hop.resendsBody)
            #expect(hop.url.absoluteString == "https://api.example/done")
        }
        let head = try #require(try CurlRedirect.nextHop(after: response(303, location: "/done"), request: request("HEAD"), url: origin))
        #expect(head.request.httpMethod == "HEAD")
    }

    @Test func movedAndFoundTurnOnlyPOSTIntoGET() throws {
        for status in [301, 302] {
            let post = try #require(try CurlRedirect.nextHop(after: response(status, location: "next"), request: request("POST", body: "x"), url: origin))
            #expect(post.request.httpMethod == "GET")
            #expect(post.url.absoluteString == "https://api.example/v1/next")
            let put = try #require(try CurlRedirect.nextHop(after: response(status, location: "next"), request: request("PUT", body: "x"), url: origin))
            #expect(put.request.httpMethod == "PUT")
            #expect(put.request.httpBody == Data("x".utf8))
            #expect(put.resendsBody)
        }
    }

    @Test func temporaryAndPermanentRedirectsKeepMethodAndBody() throws {
        for status in [307, 308] {
            let hop = try #require(try CurlRedirect.nextHop(after: response(status, location: "https://api.example/other"),
                                                        request: request("POST", body: "x"), url: origin))
            #expect(hop.request.httpMethod == "POST")
            #expect(hop.request.httpBody == Data("x".utf8))
            #expect(hop.resendsBody)
        }
    }

    @Test func credentialsStayWithTheirOrigin() throws {
        let headers = ["Authorization": "Bearer secret", "Cookie": "session=1", "Proxy-Authorization": "Basic eA==",
                       "X-API-Key": "k", "X-Auth-Token": "t", "X-Other": "kept"]
        let sameOrigin = try #require(try CurlRedirect.nextHop(after: response(302, location: "https://API.example:443/x"),
                                                           request: request("GET", headers: headers), url: origin))
        #expect(sameOrigin.request.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        let elsewhere = try #require(try CurlRedirect.nextHop(after: response(302, location: "https://cdn.example/x"),
                                                          request: request("GET", headers: headers), url: origin))
        #expect(elsewhere.request.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(elsewhere.request.value(forHTTPHeaderField: "Cookie") == nil)
        #expect(elsewhere.request.value(forHTTPHeaderField: "Proxy-Authorization") == nil)
        #expect(elsewhere.request.value(forHTTPHeaderField: "X-API-Key") == nil)
        #expect(elsewhere.request.value(forHTTPHeaderField: "X-Auth-Token") == nil)
        #expect(elsewhere.request.value(forHTTPHeaderField: "X-Other") == "kept")
        let otherPort = try #require(try CurlRedirect.nextHop(after: response(302, location: "https://api.example:8443/x"),
                                                          request: request("GET", headers: headers), url: origin))
        #expect(otherPort.request.value(forHTTPHeaderField: "X-API-Key") == nil)
    }

    @Test func finalResponsesAreNotFollowed() throws {
        #expect(try CurlRedirect.nextHop(after: response(200, location: "/x"), request: request("GET"), url: origin) == nil)
        #expect(try CurlRedirect.nextHop(after: response(304, location: "/x"), request: request("GET"), url: origin) == nil)
        #expect(try CurlRedirect.nextHop(after: response(302, location: nil), request: request("GET"), url: origin) == nil)
        #expect(throws: ConveyError.self) {
            try CurlRedirect.nextHop(after: response(302, location: "ftp://files.example/x"), request: request("GET"), url: origin)
        }
    }

    @Test func aStreamedBodyCannotBeSentTwice() throws {
        var streamed = request("PUT")
        streamed.httpBodyStream = InputStream(data: Data("x".utf8))
        #expect(try CurlRedirect.nextHop(after: response(307, location: "/x"), request: streamed, url: origin) == nil)
        let seeOther = try #require(try CurlRedirect.nextHop(after: response(303, location: "/x"), request: streamed, url: origin))
        #expect(seeOther.request.httpBodyStream == nil)
    }
}
#endif
