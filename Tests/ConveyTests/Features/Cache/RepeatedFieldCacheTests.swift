import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A response's repeated field lines go through the cache, in memory and on disk, as received.
@Suite("Cache of repeated fields")
@ConveyActor
struct RepeatedFieldCacheTests {
    private let lines = [
        Header(name: "Link", value: "<a>; rel=preload"), Header(name: "Cache-Control", value: "max-age=600"),
        Header(name: "X-Tag", value: "1"), Header(name: "link", value: "<b>; rel=preload"), Header(name: "x-tag", value: "2"),
    ]

    private func server(cache: DataCache) throws -> ConveyServer {
        let fields = Headers(lines: lines)
        return try stubServer(StubTransport { request in
            TransportResponse(head: ResponseHead(statusCode: 200, fields: fields, url: request.request.url),
                              data: Data("ok".utf8))
        }) { $0.cache = cache }
    }

    /// The replayed fields without the `Age` line the cache sets on every hit.
    private func withoutAge(_ fields: Headers) -> [Header] {
        fields.filter { !$0.name.equalsIgnoringASCIICase("Age") }
    }

    @Test func aHitFromMemoryReplaysEveryLineInOrder() async throws {
        let server = try server(cache: DataCache())
        let first = try await CacheProbeTask(server: server, path: "linked").download()
        #expect(first.cacheStatus == .network)
        #expect(Array(first.headerFields) == lines)
        let second = try await CacheProbeTask(server: server, path: "linked").download()
        #expect(second.cacheStatus == .hit)
        #expect(withoutAge(second.headerFields) == lines)
        #expect(second.headerValues("LINK") == ["<a>; rel=preload", "<b>; rel=preload"])
    }

    @Test func aHitFromDiskInANewCacheReplaysEveryLineInOrder() async throws {
        try await withTemporaryFolder { folder in
            let first = try await CacheProbeTask(server: server(cache: DataCache(folder: folder, memoryCostLimit: 0)), path: "linked").download()
            #expect(first.cacheStatus == .network)
            let reopened = try server(cache: DataCache(folder: folder, memoryCostLimit: 0))
            let second = try await CacheProbeTask(server: reopened, path: "linked").download()
            #expect(second.cacheStatus == .hit)
            #expect(withoutAge(second.headerFields) == lines)
        }
    }
}
