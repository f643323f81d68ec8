import Foundation
import Testing
@testable import Convey

/// The cache against the real local nginx (strong ETags, 304 on If-None-Match) and httpbin
/// (`/etag/E`, `/cache`, `/cache/N`, `/response-headers`).
@Suite("Cache on the wire", .wire)
@ConveyActor
struct CacheWireTests {
    private func nginx(cache: DataCache, strategy: CacheStrategy = .localFirst) throws -> ConveyServer {
        var configuration = ServerConfiguration(echoSink: EchoCapture())
        configuration.cache = cache
        configuration.defaultCacheStrategy = strategy
        return ConveyServer(remote: try TestServers.nginx(), configuration: configuration)
    }

    private func httpbin(cache: DataCache) throws -> ConveyServer {
        try httpbinServer { $0.cache = cache }
    }

    @Test func nginxStrongETagsRevalidateWithA304AndTheStoredBody() async throws {
        let cache = DataCache()
        let server = try nginx(cache: cache)
        let first = try await CacheProbeTask(server: server, path: "hello.txt").download()
        let tag = try #require(first.header("ETag"))
        #expect(tag.hasPrefix("\""))
        #expect(first.cacheStatus == .network)
        #expect(await cache.eTags.eTag(for: try #require(first.request.url)) == tag)

        let second = try await CacheProbeTask(server: server, path: "hello.txt").download()
        #expect(second.cacheStatus == .revalidated)
        #expect(second.request.value(forHTTPHeaderField: "If-None-Match") == tag)
        #expect(second.statusCode == 200)
        #expect(second.stringResult == "Hello from nginx\n")
    }

    @Test func clearedValidatorsMakeTheNextRequestUnconditional() async throws {
        let cache = DataCache()
        let server = try nginx(cache: cache)
        let first = try await CacheProbeTask(server: server, path: "hello.txt").download()
        let url = try #require(first.request.url)
        await cache.eTags.removeValidators(for: url)
        #expect(await cache.eTags.eTag(for: url) == nil)
        #expect(await cache.eTags.lastModified(for: url) == nil)
        let second = try await CacheProbeTask(server: server, path: "hello.txt").download()
        #expect(second.cacheStatus == .network)
        #expect(second.request.value(forHTTPHeaderField: "If-None-Match") == nil)
        #expect(await cache.eTags.eTag(for: url) != nil)
        await cache.eTags.removeAll()
        #expect(await cache.eTags.eTag(for: url) == nil)
    }

    @Test func binaryPayloadsComeThroughTheCacheByURL() async throws {
        try await withTemporaryFolder { folder in
            let cache = try DataCache(folder: folder)
            let url = try #require(URL(string: try TestServers.nginx().urlString(forPath: "1k.bin")))
            let expected = Data((0..<1024).map { UInt8($0 % 251) })
            let first = try await cache.data(from: url)
            #expect(first.payload == expected)
            #expect(first.cacheStatus == .network)
            let second = try await cache.data(from: url)
            #expect(second.payload == expected)
            #expect(second.cacheStatus == .revalidated)
            await cache.flush()

            let offline = try DataCache(folder: folder)
            let local = try await offline.data(from: url, strategy: .localOnly)
            #expect(local.payload == expected)
            #expect(local.cacheStatus == .hit)
        }
    }

    @Test func aCorruptFileOnDiskIsFetchedAgainFromNginx() async throws {
        try await withTemporaryFolder { folder in
            let cache = try DataCache(folder: folder, memoryCostLimit: 0)
            let server = try nginx(cache: cache)
            let first = try await CacheProbeTask(server: server, path: "10k.json").download()
            await cache.flush()
            let file = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
                .allObjects.compactMap { $0 as? URL }.first { $0.lastPathComponent.count == 64 })
            var bytes = try Data(contentsOf: file)
            bytes[bytes.count / 2] ^= 0x01
            try bytes.write(to: file)

            let second = try await CacheProbeTask(server: server, path: "10k.json").download()
            #expect(second.cacheStatus == .network)
            #expect(second.request.value(forHTTPHeaderField: "If-None-Match") == nil)
            #expect(second.data == first.data)
            #expect(await cache.statistics.droppedDiskEntries == 1)
            await cache.flush()
            let third = try await CacheProbeTask(server: server, path: "10k.json").download()
            #expect(third.cacheStatus == .revalidated)
            #expect(third.data == first.data)
        }
    }

    @Test func httpbinUnquotedETagsRevalidate() async throws {
        let server = try httpbin(cache: DataCache())
        let first = try await CacheProbeTask(server: server, path: "etag/plain-tag").download()
        #expect(first.header("ETag") == "plain-tag")
        let second = try await CacheProbeTask(server: server, path: "etag/plain-tag").download()
        #expect(second.cacheStatus == .revalidated)
        #expect(second.data == first.data)
    }

    @Test func httpbinCacheAnswersAConditionalRequestWith304() async throws {
        let server = try httpbin(cache: DataCache())
        let first = try await CacheProbeTask(server: server, path: "cache").download()
        #expect(first.header("Last-Modified") != nil)
        let second = try await CacheProbeTask(server: server, path: "cache").download()
        #expect(second.cacheStatus == .revalidated)
        #expect(second.request.value(forHTTPHeaderField: "If-Modified-Since") == first.header("Last-Modified"))
        #expect(second.data == first.data)
    }

    @Test func httpbinMaxAgeIsServedLocallyWhileFresh() async throws {
        let server = try httpbin(cache: DataCache())
        let first = try await CacheProbeTask(server: server, path: "cache/60").download()
        let second = try await CacheProbeTask(server: server, path: "cache/60").download()
        #expect(first.cacheStatus == .network)
        #expect(second.cacheStatus == .hit)
        #expect(second.data == first.data)
        #expect(second.header("Cache-Control") == "public, max-age=60")
    }

    @Test func maxAgeExpiresAndTheResponseIsFetchedAgain() async throws {
        let server = try httpbin(cache: DataCache())
        let parameters = ["Cache-Control": "max-age=2"]
        _ = try await CacheProbeTask(server: server, path: "response-headers", queryParameters: parameters).download()
        let fresh = try await CacheProbeTask(server: server, path: "response-headers", queryParameters: parameters).download()
        #expect(fresh.cacheStatus == .hit)
        try await Task.sleep(for: .seconds(3))
        let expired = try await CacheProbeTask(server: server, path: "response-headers", queryParameters: parameters).download()
        #expect(expired.cacheStatus == .network)
    }

    @Test func httpbinNoStoreIsNeverWritten() async throws {
        let cache = DataCache()
        let server = try httpbin(cache: cache)
        let parameters = ["Cache-Control": "no-store", "ETag": "\"ns\""]
        let first = try await CacheProbeTask(server: server, path: "response-headers", queryParameters: parameters).download()
        let second = try await CacheProbeTask(server: server, path: "response-headers", queryParameters: parameters).download()
        #expect(second.cacheStatus == .network)
        #expect(second.request.value(forHTTPHeaderField: "If-None-Match") == nil)
        #expect(await cache.response(for: try #require(first.request.url)) == nil)
    }

    @Test func httpbinNoCacheRevalidatesEveryTime() async throws {
        let server = try httpbin(cache: DataCache())
        let parameters = ["Cache-Control": "no-cache, max-age=600", "ETag": "nc-tag"]
        _ = try await CacheProbeTask(server: server, path: "response-headers", queryParameters: parameters).download()
        let second = try await CacheProbeTask(server: server, path: "response-headers", queryParameters: parameters).download()
        // /response-headers ignores If-None-Match, so the revalidation comes back as a full 200.
        #expect(second.request.value(forHTTPHeaderField: "If-None-Match") == "nc-tag")
        #expect(second.cacheStatus == .network)
    }

    @Test func varyIsRespectedAgainstHttpbin() async throws {
        let server = try httpbin(cache: DataCache())
        let parameters = ["Cache-Control": "max-age=600", "Vary": "X-Variant"]
        func fetch(_ variant: String) async throws -> ServerResponse<Data> {
            try await CacheProbeTask(server: server, path: "response-headers", requestHeaders: ["X-Variant": variant],
                                     queryParameters: parameters).download()
        }
        #expect(try await fetch("a").cacheStatus == .network)
        #expect(try await fetch("a").cacheStatus == .hit)
        #expect(try await fetch("b").cacheStatus == .network)
        #expect(try await fetch("b").cacheStatus == .hit)
    }

    @Test func aRedirectedResponseIsNotStoredUnderTheFirstURL() async throws {
        let cache = DataCache()
        let server = try httpbin(cache: cache)
        let response = try await CacheProbeTask(server: server, path: "redirect-to", queryParameters: ["url": "/cache/60"]).download()
        #expect(response.statusCode == 200)
        #expect(await cache.response(for: try #require(response.request.url)) == nil)
    }

    @Test func remoteFirstFallsBackWhenTheServerCannotBeReached() async throws {
        let cache = DataCache()
        let unreachable = try #require(URL(string: "http://127.0.0.1:1/feed"))
        await cache.store(CachedResponse(url: unreachable, headers: ["Content-Type": "text/plain"], body: Data("last known feed".utf8)))
        var configuration = ServerConfiguration(echoSink: EchoCapture())
        configuration.cache = cache
        configuration.defaultCacheStrategy = .remoteFirst
        let server = ConveyServer(remote: Remote(name: "closed", url: try #require(URL(string: "http://127.0.0.1:1"))), configuration: configuration)
        let response = try await CacheProbeTask(server: server, path: "feed").download()
        #expect(response.cacheStatus == .fallback)
        #expect(response.stringResult == "last known feed")
        await #expect(throws: ConveyError.self) {
            try await CacheProbeTask(server: server, path: "feed", strategy: .skipLocal).download()
        }
    }
}
