import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Each hop of a redirect the pipeline follows goes through the cache (RFC 9110 §15.4), so
/// permanent ones are stored and followed from the cache; against a stub origin that counts what reaches it.
@Suite("Cache redirects")
@ConveyActor
struct CacheRedirectTests {
    private func origin(status: Int, redirectFields: [String: String] = ["Cache-Control": "max-age=600"]) -> StubOrigin {
        StubOrigin { request, _ in
            switch request.url.path {
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
        #expect(origin.requests.map { $0.url.path } == ["/old", "/new"])
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
        #expect(origin.requests.map { $0.url.path } == ["/old", "/new", "/old"])
    }

    @Test func aRedirectLoopFailsAfterTheHopLimit() async throws {
        let origin = origin(status: 301)
        let server = try cachingStubServer(origin)
        let error = await #expect(throws: ConveyError.self) { try await CacheProbeTask(server: server, path: "loop").download() }
        guard let failure = error?.transportFailure else {
            Issue.record("not a transport failure: \(String(describing: error))")
            return
        }
        #expect(failure.kind == .redirectRefused)
        #expect(failure.reason.contains("more than 20 redirects"))
    }
}
