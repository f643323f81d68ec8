import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Convey

/// Redirects the cache follows itself (RFC 9110 §15.4), so permanent ones are stored and followed
/// from the cache; against a stub origin that counts what reaches it.
@Suite("Cache redirects")
@ConveyActor
struct CacheRedirectTests {
    private func origin(status: Int, redirectFields: [String: String] = ["Cache-Control": "max-age=600"]) -> StubOrigin {
        StubOrigin { request, _ in
            switch request.url?.path {
            case "/old": return (status, redirectFields.merging(["Location": "/new"]) { $1 }, "")
            case "/loop": return (301, ["Location": "/loop"], "")
            default: return (200, ["Cache-Control": "max-age=600"], "new")
            }
        }
    }

    @Test(arguments: [301, 308])
    func rfc9110_15_4_aPermanentRedirectIsStoredAndFollowedFromTheCache(status: Int) async throws {
        let origin = origin(status: status)
        let server = try cachingStubServer(origin)
        let first = try await CacheProbeTask(server: server, path: "old").download()
        #expect(first.stringResult == "new")
        #expect(first.request.url.path == "/new")
        #expect(origin.requests.map { $0.url?.path } == ["/old", "/new"])
        let second = try await CacheProbeTask(server: server, path: "old").download()
        #expect(second.cacheStatus == .hit)
        #expect(second.stringResult == "new")
        #expect(origin.count == 2)
    }

    @Test func rfc9110_15_4_3_aTemporaryRedirectWithoutFreshnessIsAskedEachTime() async throws {
        let origin = origin(status: 302, redirectFields: [:])
        let server = try cachingStubServer(origin)
        _ = try await CacheProbeTask(server: server, path: "old").download()
        let second = try await CacheProbeTask(server: server, path: "old").download()
        #expect(second.cacheStatus == .hit)
        #expect(origin.requests.map { $0.url?.path } == ["/old", "/new", "/old"])
    }

    @Test func aRedirectLoopFailsAfterTheHopLimit() async throws {
        let server = try cachingStubServer(origin(status: 301))
        await #expect(throws: ConveyError.self) { try await CacheProbeTask(server: server, path: "loop").download() }
    }

    @Test func credentialsAreNotCarriedToAnotherOrigin() throws {
        var request = OutgoingRequest(url: try testURL("https://a.example/x"))
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        request.setValue("c=1", forHTTPHeaderField: "Cookie")
        request.setValue("k", forHTTPHeaderField: "X-API-Key")
        request.setValue("Basic eA==", forHTTPHeaderField: "Proxy-Authorization")
        request.setValue("kept", forHTTPHeaderField: "X-Other")
        let sameOrigin = ResponseHead(statusCode: 301, fields: ["Location": "/y"], url: try testURL("https://a.example/x"))
        let kept = try #require(CacheRedirect.next(after: sameOrigin, request: request))
        #expect(kept.url.absoluteString == "https://a.example/y")
        #expect(kept.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        #expect(kept.value(forHTTPHeaderField: "X-API-Key") == "k")
        let elsewhere = ResponseHead(statusCode: 308, fields: ["Location": "https://b.example/y"], url: try testURL("https://a.example/x"))
        let stripped = try #require(CacheRedirect.next(after: elsewhere, request: request))
        #expect(stripped.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(stripped.value(forHTTPHeaderField: "Cookie") == nil)
        #expect(stripped.value(forHTTPHeaderField: "X-API-Key") == nil)
        #expect(stripped.value(forHTTPHeaderField: "Proxy-Authorization") == nil)
        #expect(stripped.value(forHTTPHeaderField: "X-Other") == "kept")
        #expect(CacheRedirect.next(after: ResponseHead(statusCode: 200, fields: ["Location": "/y"], url: try testURL("https://a.example/x")),
                                   request: request) == nil)
        #expect(CacheRedirect.next(after: ResponseHead(statusCode: 301, fields: ["Location": "ftp://b.example/y"], url: try testURL("https://a.example/x")),
                                   request: request) == nil)
    }
}
