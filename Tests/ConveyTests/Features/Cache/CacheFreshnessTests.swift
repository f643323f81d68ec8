import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Freshness decisions through the whole pipeline, against a stub origin, with time moved by an
/// injected clock: heuristics, request directives, immutable, stale-while-revalidate,
/// stale-if-error, `Vary` variants. Each test names its clause.
@Suite("Cache freshness")
@ConveyActor
struct CacheFreshnessTests {
    private let clock = ManualClock()

    private func server(_ origin: StubOrigin, echo: EchoCapture? = nil,
                        configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> (ConveyServer, DataCache) {
        let cache = DataCache(clock: clock.cacheClock)
        let server = try stubServer(origin.transport) {
            $0.cache = cache
            if let echo {
                $0.echoSink = echo.sink
                $0.defaultEchoStyle = .consoleMinimum
            }
            configure(&$0)
        }
        return (server, cache)
    }

    private func get(_ server: ConveyServer, _ path: String = "r", headers: Headers = [],
                     strategy: CacheStrategy? = nil) async throws -> ServerResponse<Data> {
        try await CacheProbeTask(server: server, path: path, strategy: strategy, requestHeaders: headers).download()
    }

    // MARK: §4.2.2 heuristic freshness

    @Test func rfc9111_4_2_2_heuristicFreshnessAnswersAsAHeuristicHitWhenTurnedOn() async throws {
        let (now, modified) = (clock.now, clock.now - 10_000)
        let origin = StubOrigin { _, number in (200, ["Date": httpDate(now), "Last-Modified": httpDate(modified)], "v\(number)") }
        let (server, _) = try server(origin) { $0.usesHeuristicFreshness = true }
        _ = try await get(server)
        clock.advance(500)
        let second = try await get(server)
        #expect(second.cacheStatus == .heuristicHit)
        #expect(second.cacheStatus.isFromCache)
        #expect(second.stringResult == "v1")
        clock.advance(600)
        #expect(try await get(server).cacheStatus != .heuristicHit)
        #expect(origin.count == 2)
    }

    @Test func rfc9111_4_2_2_heuristicFreshnessIsOffByDefault() async throws {
        let (now, modified) = (clock.now, clock.now - 10_000)
        let origin = StubOrigin { _, _ in (200, ["Date": httpDate(now), "Last-Modified": httpDate(modified)], "v") }
        let (server, _) = try server(origin)
        _ = try await get(server)
        let second = try await get(server)
        #expect(second.request.value(forHTTPHeaderField: "If-Modified-Since") == httpDate(modified))
        #expect(origin.count == 2)
    }

    // MARK: freshness with the injected clock

    @Test func rfc9111_4_2_aMaxAgeResponseIsFreshUntilItsLifetimePassesOnTheCacheClock() async throws {
        let origin = StubOrigin { _, number in (200, ["Cache-Control": "max-age=2"], "v\(number)") }
        let (server, _) = try server(origin)
        _ = try await get(server)
        clock.advance(1.5)
        #expect(try await get(server).cacheStatus == .hit)
        clock.advance(1)
        let expired = try await get(server)
        #expect(expired.cacheStatus == .network)
        #expect(expired.stringResult == "v2")
    }

    // MARK: §5.2.1 request directives

    @Test func rfc9111_5_2_1_2_maxStaleAcceptsAStaleResponseWithinItsBound() async throws {
        let origin = StubOrigin { _, number in (200, ["Cache-Control": "max-age=10"], "v\(number)") }
        let (server, _) = try server(origin)
        _ = try await get(server)
        clock.advance(30)
        let within = try await get(server, headers: ["Cache-Control": "max-stale=60"])
        #expect(within.cacheStatus == .stale)
        #expect(within.stringResult == "v1")
        #expect(try await get(server, headers: ["Cache-Control": "max-stale"]).cacheStatus == .stale)
        let beyond = try await get(server, headers: ["Cache-Control": "max-stale=5"])
        #expect(beyond.cacheStatus == .network)
        #expect(origin.count == 2)
    }

    @Test func rfc9111_5_2_1_2_maxStaleNeverServesAMustRevalidateResponse() async throws {
        let origin = StubOrigin { _, number in (200, ["Cache-Control": "max-age=10, must-revalidate"], "v\(number)") }
        let (server, _) = try server(origin)
        _ = try await get(server)
        clock.advance(30)
        #expect(try await get(server, headers: ["Cache-Control": "max-stale=60"]).cacheStatus == .network)
    }

    @Test func rfc9111_5_2_1_3_minFreshAsksTheServerWhenTooLittleFreshnessIsLeft() async throws {
        let origin = StubOrigin { _, number in (200, ["Cache-Control": "max-age=100"], "v\(number)") }
        let (server, _) = try server(origin)
        _ = try await get(server)
        clock.advance(50)
        #expect(try await get(server, headers: ["Cache-Control": "min-fresh=40"]).cacheStatus == .hit)
        #expect(try await get(server, headers: ["Cache-Control": "min-fresh=60"]).cacheStatus == .network)
    }

    @Test func rfc9111_5_2_1_7_onlyIfCachedNeverSends() async throws {
        let origin = StubOrigin { _, _ in (200, ["Cache-Control": "max-age=100"], "v") }
        let (server, _) = try server(origin)
        await #expect {
            try await get(server, headers: ["Cache-Control": "only-if-cached"])
        } throws: { error in
            guard let failure = (error as? ConveyError)?.cacheFailure else { return false }
            return failure.notCached == true
        }
        #expect(origin.count == 0)
        _ = try await get(server)
        clock.advance(1000)
        let cached = try await get(server, headers: ["Cache-Control": "only-if-cached"])
        #expect(cached.cacheStatus == .hit)
        #expect(origin.count == 1)
    }

    // MARK: RFC 8246 immutable

    @Test func rfc8246_aFreshImmutableResponseIsNotRevalidatedOnANoCacheReload() async throws {
        let origin = StubOrigin { _, number in (200, ["Cache-Control": "max-age=100, immutable", "ETag": "\"i\""], "v\(number)") }
        let (server, _) = try server(origin)
        _ = try await get(server)
        #expect(try await get(server, headers: ["Cache-Control": "no-cache"]).cacheStatus == .hit)
        clock.advance(200)
        #expect(try await get(server, headers: ["Cache-Control": "no-cache"]).request.value(forHTTPHeaderField: "If-None-Match") == "\"i\"")
        #expect(origin.count == 2)
    }

    @Test func rfc8246_withoutImmutableANoCacheReloadRevalidates() async throws {
        let origin = StubOrigin { _, number in (200, ["Cache-Control": "max-age=100"], "v\(number)") }
        let (server, _) = try server(origin)
        _ = try await get(server)
        #expect(try await get(server, headers: ["Cache-Control": "no-cache"]).cacheStatus == .network)
    }

    // MARK: RFC 5861 stale-while-revalidate and stale-if-error

    @Test func rfc5861_3_staleWhileRevalidateAnswersAtOnceAndRefreshesOnceInTheBackground() async throws {
        let echo = EchoCapture()
        let origin = StubOrigin { _, number in (200, ["Cache-Control": "max-age=10, stale-while-revalidate=60", "ETag": "\"v\(number)\""], "v\(number)") }
        // The refresh is held until every stale answer is in, so none of them can see its result.
        let refreshGate = Gate()
        let answering = origin.transport
        let cache = DataCache(clock: clock.cacheClock)
        let server = try stubServer(StubTransport { request in
            if origin.count > 0 { try await refreshGate.wait() }
            return try await answering.send(TransportRequest(request: request.request, timeout: request.timeout))
        }) {
            $0.cache = cache
            $0.echoSink = echo.sink
            $0.defaultEchoStyle = .consoleMinimum
        }
        _ = try await get(server)
        clock.advance(20)
        var statuses: [CacheStatus] = []
        for _ in 0..<5 {
            let stale = try await get(server)
            #expect(stale.stringResult == "v1")
            statuses.append(stale.cacheStatus)
        }
        refreshGate.open()
        await cache.coalescer.waitUntilIdle()
        #expect(statuses == Array(repeating: .stale, count: 5))
        #expect(origin.count == 2)
        #expect((try origin.requests.required(1)).value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        #expect(echo.text.components(separatedBy: "cache backgroundRefresh").count == 2)
        let refreshed = try await get(server)
        #expect(refreshed.cacheStatus == .hit)
        #expect(refreshed.stringResult == "v2")
    }

    @Test func rfc5861_3_pastTheWindowTheStaleResponseWaitsForTheServer() async throws {
        let origin = StubOrigin { _, number in (200, ["Cache-Control": "max-age=10, stale-while-revalidate=60"], "v\(number)") }
        let (server, _) = try server(origin)
        _ = try await get(server)
        clock.advance(100)
        let late = try await get(server)
        #expect(late.cacheStatus == .network)
        #expect(late.stringResult == "v2")
    }

    @Test func rfc5861_4_staleIfErrorAnswersA5xxOrANetworkFailureWithinItsWindow() async throws {
        let origin = StubOrigin { _, number in
            switch number {
            case 1: return (200, ["Cache-Control": "max-age=10, stale-if-error=60"], "v1")
            case 2: return (503, [:], "down")
            default: throw URLError(.cannotConnectToHost)
            }
        }
        let (server, _) = try server(origin)
        _ = try await get(server)
        clock.advance(30)
        let on503 = try await get(server)
        #expect(on503.cacheStatus == .fallback)
        #expect(on503.stringResult == "v1")
        let onFailure = try await get(server)
        #expect(onFailure.cacheStatus == .fallback)
        clock.advance(100)
        await #expect(throws: ConveyError.self) { try await get(server) }
    }

    // MARK: §4.1 Vary variants

    @Test func rfc9111_4_1_severalVaryVariantsLiveSideBySideLeastRecentlyUsedOut() async throws {
        let origin = StubOrigin { request, _ in
            (200, ["Cache-Control": "max-age=600", "Vary": "Accept-Language"], request.value(forHTTPHeaderField: "Accept-Language") ?? "none")
        }
        let (server, cache) = try server(origin)
        let languages = ["en", "fr", "de", "it"]
        for language in languages { _ = try await get(server, headers: ["Accept-Language": language]) }
        for language in languages {
            let hit = try await get(server, headers: ["Accept-Language": language])
            #expect(hit.cacheStatus == .hit, "\(language)")
            #expect(hit.stringResult == language)
        }
        #expect(origin.count == 4)
        // A fifth language: the least recently used variant (en) goes.
        _ = try await get(server, headers: ["Accept-Language": "es"])
        #expect(try await get(server, headers: ["Accept-Language": "fr"]).cacheStatus == .hit)
        #expect(try await get(server, headers: ["Accept-Language": "es"]).cacheStatus == .hit)
        #expect(try await get(server, headers: ["Accept-Language": "en"]).cacheStatus == .network)
        #expect(origin.count == 6)
        await cache.removeResponse(for: try testURL("https://stub.example/r"))
        #expect(try await get(server, headers: ["Accept-Language": "fr"]).cacheStatus == .network)
    }

    @Test func rfc9111_4_1_theSameLanguagesInAnotherOrderMatchTheStoredVariant() async throws {
        let origin = StubOrigin { _, _ in (200, ["Cache-Control": "max-age=600", "Vary": "Accept-Language"], "v") }
        let (server, _) = try server(origin)
        _ = try await get(server, headers: ["Accept-Language": "en-US, fr"])
        #expect(try await get(server, headers: ["Accept-Language": "fr,en-us"]).cacheStatus == .hit)
        #expect(origin.count == 1)
    }

    // MARK: §3 storing what the client does not understand

    @Test func rfc9111_3_aResponseWithAnUnknownContentCodingIsStoredAndReplayedByteForByte() async throws {
        let bytes = Data([0x00, 0xFF, 0x10, 0x80, 0x7F])
        let transport = StubTransport { request in
            TransportResponse(url: request.request.url, statusCode: 200,
                                  headers: ["Cache-Control": "max-age=600", "Content-Encoding": "x-unknown"], body: bytes)
        }
        let cache = DataCache(clock: clock.cacheClock)
        let server = try stubServer(transport) { $0.cache = cache }
        _ = try await get(server)
        let replayed = try await get(server)
        #expect(replayed.cacheStatus == .hit)
        #expect(replayed.data == bytes)
        #expect(replayed.header("Content-Encoding") == "x-unknown")
    }

    @Test func rfc9111_3_1_fieldsNamedInConnectionAreNotReplayed() async throws {
        let origin = StubOrigin { _, _ in (200, ["Cache-Control": "max-age=600", "Connection": "x-hop", "X-Hop": "1", "X-Kept": "2"], "v") }
        let (server, _) = try server(origin)
        _ = try await get(server)
        let replayed = try await get(server)
        #expect(replayed.cacheStatus == .hit)
        #expect(replayed.header("X-Hop") == nil)
        #expect(replayed.header("X-Kept") == "2")
    }
}
