import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The cache against the real local nginx (strong ETags, 304 on If-None-Match) and httpbin
/// (`/etag/E`, `/cache`, `/cache/N`, `/response-headers`).
@Suite("Cache on the wire", .wire)
@ConveyActor
struct CacheWireTests {
    private func nginx(cache: DataCache, strategy: CacheStrategy = .localFirst) throws -> ConveyServer {
        var configuration = ServerConfiguration(echoSink: EchoCapture().sink)
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
        #expect(await cache.eTag(for: first.request.url) == tag)

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
        let url = first.request.url
        await cache.removeValidators(for: url)
        #expect(await cache.eTag(for: url) == nil)
        #expect(await cache.lastModified(for: url) == nil)
        let second = try await CacheProbeTask(server: server, path: "hello.txt").download()
        #expect(second.cacheStatus == .network)
        #expect(second.request.value(forHTTPHeaderField: "If-None-Match") == nil)
        #expect(await cache.eTag(for: url) != nil)
        await cache.removeAllValidators()
        #expect(await cache.eTag(for: url) == nil)
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
        // The clock starts at the wall clock (the server's Date counts) and then moves only by hand.
        let clock = ManualClock(Date())
        let server = try httpbin(cache: DataCache(clock: clock.cacheClock))
        let parameters = ["Cache-Control": "max-age=2"]
        _ = try await CacheProbeTask(server: server, path: "response-headers", queryParameters: parameters).download()
        let fresh = try await CacheProbeTask(server: server, path: "response-headers", queryParameters: parameters).download()
        #expect(fresh.cacheStatus == .hit)
        clock.advance(3)
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
        #expect(await cache.response(for: first.request.url) == nil)
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

    @Test func aTemporaryRedirectIsFollowedEachTimeAndItsTargetStoredUnderItsOwnURL() async throws {
        let cache = DataCache()
        let server = try httpbin(cache: cache)
        let first = try await CacheProbeTask(server: server, path: "redirect-to", queryParameters: ["url": "/cache/60"]).download()
        #expect(first.statusCode == 200)
        let target = first.request.url
        #expect(target.path == "/cache/60")
        #expect(await cache.response(for: target) != nil)
        let redirecting = try testURL(try TestServers.httpbin().urlString(forPath: "redirect-to") + "?url=%2Fcache%2F60")
        #expect(await cache.response(for: redirecting) == nil)
        let second = try await CacheProbeTask(server: server, path: "redirect-to", queryParameters: ["url": "/cache/60"]).download()
        #expect(second.cacheStatus == .hit)
    }

    @Test func rfc9110_15_4_2_aPermanentRedirectFromNginxIsStoredAndFollowedFromTheCache() async throws {
        let echo = EchoCapture()
        var configuration = ServerConfiguration(echoSink: echo.sink)
        configuration.cache = DataCache()
        configuration.defaultEchoStyle = .consoleMinimum
        let server = ConveyServer(remote: try TestServers.nginx(), configuration: configuration)
        let run = UUID().uuidString
        let first = try await CacheProbeTask(server: server, path: "counted-permanent", queryParameters: ["run": run]).download()
        #expect(first.stringResult == "Hello from nginx\n")
        #expect(first.request.url.path == "/hello.txt")
        let second = try await CacheProbeTask(server: server, path: "counted-permanent", queryParameters: ["run": run]).download()
        #expect(second.stringResult == "Hello from nginx\n")
        #expect(second.cacheStatus == .revalidated)
        try await waitUntil("nginx logged the redirect") { (try? nginxCount(run)) ?? 0 >= 1 }
        #expect(try nginxCount(run) == 1)
        #expect(echo.text.contains("301 Moved Permanently"))
        #expect(echo.text.contains("cache hit"))
    }

    @Test func remoteFirstFallsBackWhenTheServerCannotBeReached() async throws {
        let cache = DataCache()
        let unreachable = try #require(URL(string: "http://127.0.0.1:1/feed"))
        await cache.store(CachedResponse(url: unreachable, headers: ["Content-Type": "text/plain"], body: Data("last known feed".utf8)))
        var configuration = ServerConfiguration(echoSink: EchoCapture().sink)
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

    // MARK: RFC 9111 §5.1, repeated fields, unknown codings (httpbin)

    @Test func rfc9111_5_1_repeatedAgeFieldsFromHttpbinCountTheFirst() async throws {
        let cache = DataCache()
        let server = try httpbin(cache: cache)
        let url = try testURL(try TestServers.httpbin().urlString(forPath: "response-headers")
                              + "?Age=7200&Age=0&Cache-Control=max-age%3D3600&run=\(UUID().uuidString)")
        let first = try await cache.data(from: url, server: server)
        #expect(first.cacheStatus == .network)
        let stored = try #require(await cache.response(for: url))
        #expect(stored.age() >= 7200)
        let second = try await cache.data(from: url, server: server)
        #expect(second.cacheStatus == .network)
    }

    #if os(Linux) && canImport(CConveyCurlShim)
    /// On curl, which passes codings it does not decode through; FoundationNetworking's URLSession
    /// refuses such a response outright (the transport's concern, not the cache's).
    @Test func rfc9111_3_anUnknownContentCodingFromHttpbinIsStoredAndReplayedAsReceived() async throws {
        let server = try httpbin(cache: DataCache())
        server.transport = CurlTransport()
        let parameters = ["Content-Encoding": "x-convey-unknown", "Cache-Control": "max-age=600", "run": UUID().uuidString]
        let first = try await CacheProbeTask(server: server, path: "response-headers", queryParameters: parameters).download()
        let second = try await CacheProbeTask(server: server, path: "response-headers", queryParameters: parameters).download()
        #expect(second.cacheStatus == .hit)
        #expect(second.data == first.data)
        #expect(second.header("Content-Encoding") == "x-convey-unknown")
    }
    #endif

    // MARK: Counted at nginx: coalescing and background refresh

    /// How many requests for URLs containing `marker` nginx logged in its counted locations.
    private func nginxCount(_ marker: String) throws -> Int {
        let path = try #require(ProcessInfo.processInfo.environment["CONVEY_NGINX_COUNTED_LOG"], "run the suite with scripts/test")
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.contains(marker) }.count
    }

    @Test func oneHundredConcurrentIdenticalGetsPutOneRequestOnNginx() async throws {
        let cache = DataCache()
        let server = try nginx(cache: cache)
        let run = UUID().uuidString
        let tasks = (0..<100).map { _ in
            Task { @ConveyActor in
                try await CacheProbeTask(server: server, path: "counted/256k.json", queryParameters: ["run": run]).download()
            }
        }
        var statuses: [CacheStatus] = []
        var bodies: Set<Data> = []
        for task in tasks {
            let response = try await task.value
            bodies.insert(response.data)
            statuses.append(response.cacheStatus)
        }
        #expect(bodies.count == 1)
        #expect(bodies.first.map(\.count) ?? 0 > 200_000)
        try await waitUntil("nginx logged the request") { (try? nginxCount(run)) ?? 0 >= 1 }
        #expect(try nginxCount(run) == 1)
        #expect(statuses.filter { $0 == .network }.count == 1)
        #expect(statuses.filter { $0 == .joined }.count == 99)
    }

    @Test func staleWhileRevalidateRefreshesOnceAtNginxAndEchoesTheRefresh() async throws {
        let clock = ManualClock(Date())
        let echo = EchoCapture()
        let cache = DataCache(clock: clock.cacheClock)
        var configuration = ServerConfiguration(echoSink: echo.sink)
        configuration.cache = cache
        configuration.defaultEchoStyle = .consoleMinimum
        let server = ConveyServer(remote: try TestServers.nginx(), configuration: configuration)
        let run = UUID().uuidString
        func get() async throws -> ServerResponse<Data> {
            try await CacheProbeTask(server: server, path: "counted-swr/hello.txt", queryParameters: ["run": run]).download()
        }
        #expect(try await get().cacheStatus == .network)
        clock.advance(10)
        let first = try await get()
        #expect(first.cacheStatus == .stale)
        #expect(first.stringResult == "Hello from nginx\n")
        for _ in 0..<4 { #expect([.stale, .hit].contains(try await get().cacheStatus)) }
        await cache.coalescer.waitUntilIdle()
        // nginx's Date runs on the wall clock while the cache clock was moved ahead, so a refreshed
        // entry may be stale again at once and refreshed again (once per URL at a time, which the
        // stub tests pin down); every refresh nginx counted must be echoed, as a conditional 304.
        let refreshes = echo.text.components(separatedBy: "cache backgroundRefresh").count - 1
        #expect(refreshes >= 1)
        try await waitUntil("nginx logged every refresh") { (try? nginxCount(run)) ?? 0 >= 1 + refreshes }
        #expect(try nginxCount(run) == 1 + refreshes)
        #expect(echo.text.components(separatedBy: "304 Not Modified").count - 1 == refreshes)
        // The 304 refreshed the stored entry: it now counts from the refresh.
        let url = first.request.url
        let refreshed = try #require(await cache.response(for: url))
        #expect(refreshed.receivedAt == clock.now)
    }

    @Test func httpbinUsersWithCookiesOrAPIKeysNeverGetEachOthersResponse() async throws {
        for header in ["Cookie", "X-API-Key"] {
            let server = try httpbin(cache: DataCache())
            let alice = try await CacheProbeTask(server: server, path: "cache/600", requestHeaders: [header: "alice"]).download()
            let bob = try await CacheProbeTask(server: server, path: "cache/600", requestHeaders: [header: "bob"]).download()
            #expect(alice.cacheStatus == .network)
            #expect(bob.cacheStatus == .network, "\(header)")
            #expect(bob.stringResult?.contains("bob") == true, "\(header): \(bob.stringResult ?? "")")
            #expect(bob.stringResult?.contains("alice") == false, "\(header)")
            let aliceAgain = try await CacheProbeTask(server: server, path: "cache/600", requestHeaders: [header: "alice"]).download()
            #expect(aliceAgain.cacheStatus == .hit)
            #expect(aliceAgain.stringResult == alice.stringResult)
        }
    }
}
