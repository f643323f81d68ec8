import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Each strategy's exact behaviour, against a stub origin that counts what it is sent.
@Suite("Cache strategies")
@ConveyActor
struct CacheStrategyTests {
    /// An origin that serves `body` with `headers` and answers a matching `If-None-Match` with 304.
    private func origin(headers: [String: String], body: String = "v1") -> StubOrigin {
        StubOrigin { request, _ in
            if let tag = headers["ETag"], request.value(forHTTPHeaderField: "If-None-Match") == tag {
                return (304, ["ETag": tag, "Cache-Control": headers["Cache-Control"] ?? ""], "")
            }
            return (200, headers, body)
        }
    }

    // MARK: localFirst

    @Test func localFirstServesAFreshResponseWithoutTheNetworkAndRunsTheHooks() async throws {
        let origin = origin(headers: ["Cache-Control": "max-age=60"])
        let server = try cachingStubServer(origin)
        let events = EventLog()
        let first = try await CacheProbeTask(server: server, path: "fresh").download()
        let second = try await CacheProbeTask(server: server, path: "fresh", events: events).download()
        #expect(origin.count == 1)
        #expect(first.cacheStatus == .network)
        #expect(second.cacheStatus == .hit)
        #expect(second.stringResult == "v1")
        #expect(second.statusCode == 200)
        #expect(second.header("Age") != nil)
        #expect(events.events == ["willSendRequest", "didReceiveResponse 200", "didFinish hit"])
    }

    @Test func localFirstRevalidatesAStaleResponseAndA304AnswersWithTheStoredBody() async throws {
        let origin = origin(headers: ["ETag": "\"v1\""])
        let server = try cachingStubServer(origin)
        _ = try await CacheProbeTask(server: server, path: "stale").download()
        let second = try await CacheProbeTask(server: server, path: "stale").download()
        #expect(origin.count == 2)
        #expect((try origin.requests.required(0)).value(forHTTPHeaderField: "If-None-Match") == nil)
        #expect((try origin.requests.required(1)).value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        #expect(second.cacheStatus == .revalidated)
        #expect(second.cacheStatus.wasRevalidated)
        #expect(second.statusCode == 200)
        #expect(second.stringResult == "v1")
        #expect(second.request.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
    }

    @Test func localFirstSendsIfModifiedSinceForALastModifiedValidator() async throws {
        let modified = httpDate(Date(timeIntervalSince1970: 1_700_000_000))
        let origin = StubOrigin { request, _ in
            request.value(forHTTPHeaderField: "If-Modified-Since") == modified ? (304, [:], "") : (200, ["Last-Modified": modified], "dated")
        }
        let server = try cachingStubServer(origin)
        _ = try await CacheProbeTask(server: server, path: "dated").download()
        let second = try await CacheProbeTask(server: server, path: "dated").download()
        #expect(second.cacheStatus == .revalidated)
        #expect(second.stringResult == "dated")
    }

    @Test func localFirstFetchesAStaleResponseWithoutValidatorsAgainInFull() async throws {
        let origin = StubOrigin { _, number in (200, [:], "body \(number)") }
        let server = try cachingStubServer(origin)
        _ = try await CacheProbeTask(server: server, path: "plain").download()
        let second = try await CacheProbeTask(server: server, path: "plain").download()
        #expect((try origin.requests.required(1)).value(forHTTPHeaderField: "If-None-Match") == nil)
        #expect(second.cacheStatus == .network)
        #expect(second.stringResult == "body 2")
    }

    @Test func noCacheResponsesAreRevalidatedEveryTimeEvenWithMaxAge() async throws {
        let origin = origin(headers: ["ETag": "\"n\"", "Cache-Control": "no-cache, max-age=600"])
        let server = try cachingStubServer(origin)
        for _ in 0..<3 { _ = try await CacheProbeTask(server: server, path: "nc").download() }
        #expect(origin.count == 3)
        #expect(origin.requests.dropFirst().allSatisfy { $0.value(forHTTPHeaderField: "If-None-Match") == "\"n\"" })
    }

    @Test func aRequestSayingNoCacheRevalidatesAFreshResponse() async throws {
        let origin = origin(headers: ["ETag": "\"f\"", "Cache-Control": "max-age=600"])
        let server = try cachingStubServer(origin)
        _ = try await CacheProbeTask(server: server, path: "rq").download()
        let second = try await CacheProbeTask(server: server, path: "rq", requestHeaders: ["Cache-Control": "no-cache"]).download()
        #expect(origin.count == 2)
        #expect(second.cacheStatus == .revalidated)
    }

    @Test func anAgeHeaderBeyondMaxAgeMakesAResponseStaleOnArrival() async throws {
        let origin = StubOrigin { _, number in (200, ["Cache-Control": "max-age=60", "Age": "90"], "aged \(number)") }
        let server = try cachingStubServer(origin)
        _ = try await CacheProbeTask(server: server, path: "aged").download()
        let second = try await CacheProbeTask(server: server, path: "aged").download()
        #expect(origin.count == 2)
        #expect(second.stringResult == "aged 2")
    }

    @Test func aNotModifiedForAnotherTagDropsTheEntryAndAsksAgainUnconditionally() async throws {
        let origin = StubOrigin { request, number in
            if request.value(forHTTPHeaderField: "If-None-Match") != nil { return (304, ["ETag": "\"other\""], "") }
            return (200, ["ETag": "\"v\(number)\""], "body \(number)")
        }
        let server = try cachingStubServer(origin)
        _ = try await CacheProbeTask(server: server, path: "tags").download()
        let second = try await CacheProbeTask(server: server, path: "tags").download()
        #expect(origin.count == 3)
        #expect((try origin.requests.required(2)).value(forHTTPHeaderField: "If-None-Match") == nil)
        #expect(second.cacheStatus == .network)
        #expect(second.stringResult == "body 3")
    }

    // MARK: remoteFirst

    @Test func remoteFirstAsksTheNetworkEvenWhenAFreshResponseIsStored() async throws {
        let origin = origin(headers: ["ETag": "\"r\"", "Cache-Control": "max-age=600"])
        let server = try cachingStubServer(origin, strategy: .remoteFirst)
        _ = try await CacheProbeTask(server: server, path: "remote").download()
        let second = try await CacheProbeTask(server: server, path: "remote").download()
        #expect(origin.count == 2)
        #expect(second.cacheStatus == .revalidated)
        #expect(second.stringResult == "v1")
    }

    @Test func remoteFirstFallsBackToTheStoredResponseWhenTheNetworkFails() async throws {
        let origin = StubOrigin { _, number in
            if number > 1 { throw URLError(.notConnectedToInternet) }
            return (200, ["Cache-Control": "max-age=0"], "offline copy")
        }
        let server = try cachingStubServer(origin, strategy: .remoteFirst)
        _ = try await CacheProbeTask(server: server, path: "offline").download()
        let events = EventLog()
        let second = try await CacheProbeTask(server: server, path: "offline", events: events).download()
        #expect(second.cacheStatus == .fallback)
        #expect(second.cacheStatus.isFromCache)
        #expect(second.stringResult == "offline copy")
        #expect(events.events == ["willSendRequest", "didReceiveResponse 200", "didFinish fallback"])
    }

    @Test func remoteFirstFallsBackOnAServiceUnavailableAnswer() async throws {
        let origin = StubOrigin { _, number in number > 1 ? (503, [:], "maintenance") : (200, [:], "good copy") }
        let server = try cachingStubServer(origin, strategy: .remoteFirst)
        _ = try await CacheProbeTask(server: server, path: "busy").download()
        let second = try await CacheProbeTask(server: server, path: "busy").download()
        #expect(second.cacheStatus == .fallback)
        #expect(second.stringResult == "good copy")
    }

    @Test func remoteFirstWithNothingStoredReportsTheNetworkError() async throws {
        let origin = StubOrigin { _, _ in throw URLError(.cannotConnectToHost) }
        let server = try cachingStubServer(origin, strategy: .remoteFirst)
        await #expect {
            try await CacheProbeTask(server: server, path: "none").download()
        } throws: { error in
            guard let failure = (error as? ConveyError)?.transportFailure else { return false }
            return failure.code == URLError.Code.cannotConnectToHost.rawValue
        }
    }

    @Test func remoteFirstNeverFallsBackToAStaleMustRevalidateResponse() async throws {
        let origin = StubOrigin { _, number in
            if number > 1 { throw URLError(.notConnectedToInternet) }
            return (200, ["Cache-Control": "max-age=0, must-revalidate"], "strict")
        }
        let server = try cachingStubServer(origin, strategy: .remoteFirst)
        _ = try await CacheProbeTask(server: server, path: "strict").download()
        await #expect(throws: ConveyError.self) { try await CacheProbeTask(server: server, path: "strict").download() }
    }

    // MARK: skipLocal

    @Test func skipLocalIgnoresTheStoredResponseAndReplacesIt() async throws {
        let origin = StubOrigin { _, number in (200, ["Cache-Control": "max-age=600", "ETag": "\"s\(number)\""], "version \(number)") }
        let server = try cachingStubServer(origin)
        _ = try await CacheProbeTask(server: server, path: "skip").download()
        let refreshed = try await CacheProbeTask(server: server, path: "skip", strategy: .skipLocal).download()
        #expect((try origin.requests.required(1)).value(forHTTPHeaderField: "If-None-Match") == nil)
        #expect(refreshed.cacheStatus == .network)
        #expect(refreshed.stringResult == "version 2")
        let local = try await CacheProbeTask(server: server, path: "skip").download()
        #expect(origin.count == 2)
        #expect(local.stringResult == "version 2")
    }

    // MARK: localOnly

    @Test func localOnlyFailsWithNotCachedAndSendsNothing() async throws {
        let origin = origin(headers: [:])
        let server = try cachingStubServer(origin)
        await #expect {
            try await CacheProbeTask(server: server, path: "absent", strategy: .localOnly).download()
        } throws: { error in
            guard let failure = (error as? ConveyError)?.cacheFailure else { return false }
            return failure.notCached == true && failure.reason == "nothing is stored for it"
                && failure.url?.absoluteString == "https://stub.example/absent"
        }
        #expect(origin.count == 0)
    }

    @Test func localOnlyServesAStaleResponseWithoutTheNetwork() async throws {
        let origin = origin(headers: ["ETag": "\"old\""], body: "old but usable")
        let server = try cachingStubServer(origin)
        _ = try await CacheProbeTask(server: server, path: "old").download()
        let local = try await CacheProbeTask(server: server, path: "old", strategy: .localOnly).download()
        #expect(origin.count == 1)
        #expect(local.cacheStatus == .hit)
        #expect(local.stringResult == "old but usable")
    }

    @Test func aResponseSeededByHandAnswersLocalOnlyWithItsValidators() async throws {
        let origin = origin(headers: [:])
        let cache = DataCache()
        let server = try cachingStubServer(origin, cache: cache)
        let url = try #require(URL(string: "https://stub.example/bundled"))
        await cache.store(Data("shipped with the app".utf8), for: url, headers: ["Cache-Control": "max-age=60", "ETag": "\"v7\""])

        let local = try await CacheProbeTask(server: server, path: "bundled", strategy: .localOnly).download()
        #expect(local.cacheStatus == .hit)
        #expect(local.stringResult == "shipped with the app")
        #expect(await cache.eTag(for: url) == "\"v7\"")
        #expect(origin.count == 0)
    }

    @Test func localOnlyWithoutACacheFailsWithNotCached() async throws {
        let origin = origin(headers: [:])
        let server = try stubServer(origin.transport)
        await #expect {
            try await CacheProbeTask(server: server, path: "x", strategy: .localOnly).download()
        } throws: { error in
            guard let failure = (error as? ConveyError)?.cacheFailure else { return false }
            return failure.notCached == true && failure.reason.contains("no cache")
        }
        #expect(origin.count == 0)
    }

    // MARK: never

    @Test func neverNeitherReadsNorStores() async throws {
        let origin = origin(headers: ["Cache-Control": "max-age=600"])
        let cache = DataCache()
        let server = try cachingStubServer(origin, cache: cache)
        let response = try await CacheProbeTask(server: server, path: "never", strategy: .never).download()
        #expect(response.cacheStatus == .network)
        #expect(await cache.response(for: try testURL("https://stub.example/never")) == nil)
        _ = try await CacheProbeTask(server: server, path: "never").download()
        _ = try await CacheProbeTask(server: server, path: "never", strategy: .never).download()
        #expect(origin.count == 3)
    }

    // MARK: What is stored

    @Test func noStoreResponsesAreNeverWritten() async throws {
        let origin = origin(headers: ["Cache-Control": "no-store, max-age=600", "ETag": "\"x\""])
        let cache = DataCache()
        let server = try cachingStubServer(origin, cache: cache)
        _ = try await CacheProbeTask(server: server, path: "secret").download()
        _ = try await CacheProbeTask(server: server, path: "secret").download()
        #expect(origin.count == 2)
        #expect((try origin.requests.required(1)).value(forHTTPHeaderField: "If-None-Match") == nil)
        #expect(await cache.response(for: try testURL("https://stub.example/secret")) == nil)
    }

    @Test func aNoStoreAnswerRemovesWhatWasStoredBefore() async throws {
        let origin = StubOrigin { _, number in (200, number == 1 ? [:] : ["Cache-Control": "no-store"], "body") }
        let cache = DataCache()
        let server = try cachingStubServer(origin, cache: cache)
        _ = try await CacheProbeTask(server: server, path: "turned").download()
        #expect(await cache.response(for: try testURL("https://stub.example/turned")) != nil)
        _ = try await CacheProbeTask(server: server, path: "turned").download()
        #expect(await cache.response(for: try testURL("https://stub.example/turned")) == nil)
    }

    @Test func theQueryStringIsPartOfTheKey() async throws {
        let origin = StubOrigin { request, _ in (200, ["Cache-Control": "max-age=600"], request.url.query ?? "") }
        let server = try cachingStubServer(origin)
        let page1 = try await CacheProbeTask(server: server, path: "list", queryParameters: ["page": "1"]).download()
        let page2 = try await CacheProbeTask(server: server, path: "list", queryParameters: ["page": "2"]).download()
        let page1Again = try await CacheProbeTask(server: server, path: "list", queryParameters: ["page": "1"]).download()
        #expect(page1.stringResult == "page=1")
        #expect(page2.stringResult == "page=2")
        #expect(page1Again.stringResult == "page=1")
        #expect(page1Again.cacheStatus == .hit)
        #expect(origin.count == 2)
    }

    @Test func requestsWithCredentialsBypassTheCacheWhenTheTaskOptsOut() async throws {
        let origin = StubOrigin { request, number in
            (200, ["Cache-Control": "max-age=600"], "\(request.value(forHTTPHeaderField: "Authorization") ?? "-") \(number)")
        }
        let cache = DataCache()
        let server = try cachingStubServer(origin, cache: cache)
        let alice: Headers = ["Authorization": "Bearer alice"]
        _ = try await CacheProbeTask(server: server, path: "me", requestHeaders: alice, cachesAuthorizedResponses: false).download()
        let bypassed = try await CacheProbeTask(server: server, path: "me", requestHeaders: alice, cachesAuthorizedResponses: false).download()
        #expect(origin.count == 2)
        #expect(bypassed.cacheStatus == .network)
        #expect(await cache.response(for: try testURL("https://stub.example/me")) == nil)

        _ = try await CacheProbeTask(server: server, path: "me", requestHeaders: alice).download()
        let aliceAgain = try await CacheProbeTask(server: server, path: "me", requestHeaders: alice).download()
        #expect(aliceAgain.cacheStatus == .hit)
        #expect(aliceAgain.stringResult == "Bearer alice 3")
        let bob = try await CacheProbeTask(server: server, path: "me", requestHeaders: ["Authorization": "Bearer bob"]).download()
        #expect(bob.cacheStatus == .network)
        #expect(bob.stringResult == "Bearer bob 4")
        #expect(await cache.response(for: try testURL("https://stub.example/me")) == nil, "no anonymous entry was stored")
    }

    @Test func varyKeepsAResponseForTheHeaderValuesItWasFetchedWith() async throws {
        let origin = StubOrigin { request, number in
            (200, ["Cache-Control": "max-age=600", "Vary": "Accept-Language"],
             "\(request.value(forHTTPHeaderField: "Accept-Language") ?? "-") \(number)")
        }
        let server = try cachingStubServer(origin)
        let english = try await CacheProbeTask(server: server, path: "greeting", requestHeaders: ["Accept-Language": "en"]).download()
        let englishAgain = try await CacheProbeTask(server: server, path: "greeting", requestHeaders: ["Accept-Language": "en"]).download()
        let french = try await CacheProbeTask(server: server, path: "greeting", requestHeaders: ["Accept-Language": "fr"]).download()
        #expect(english.stringResult == "en 1")
        #expect(englishAgain.cacheStatus == .hit)
        #expect(french.cacheStatus == .network)
        #expect(french.stringResult == "fr 2")
    }

    @Test func aSuccessfulPostInvalidatesTheStoredResponseForItsURL() async throws {
        let origin = StubOrigin { request, number in (200, ["Cache-Control": "max-age=600"], "\(request.method) \(number)") }
        let cache = DataCache()
        let server = try cachingStubServer(origin, cache: cache)
        _ = try await CacheProbeTask(server: server, path: "doc").download()
        #expect(await cache.response(for: try testURL("https://stub.example/doc")) != nil)
        _ = try await CacheProbeTask(server: server, path: "doc", method: .post).download()
        #expect(await cache.response(for: try testURL("https://stub.example/doc")) == nil)
        let reread = try await CacheProbeTask(server: server, path: "doc").download()
        #expect(reread.stringResult == "GET 3")
    }

    @Test func headResponsesAreKeptApartFromGetResponses() async throws {
        let origin = StubOrigin { request, number in (200, ["Cache-Control": "max-age=600"], "\(request.method) \(number)") }
        let server = try cachingStubServer(origin)
        let head = try await CacheProbeTask(server: server, path: "both", method: .head).download()
        let get = try await CacheProbeTask(server: server, path: "both").download()
        let headAgain = try await CacheProbeTask(server: server, path: "both", method: .head).download()
        #expect(head.cacheStatus == .network)
        #expect(get.cacheStatus == .network)
        #expect(get.stringResult == "GET 2")
        #expect(headAgain.cacheStatus == .hit)
        #expect(headAgain.data.isEmpty)
    }

    @Test func aHitIsEchoedAsOne() async throws {
        let origin = origin(headers: ["Cache-Control": "max-age=60"])
        let capture = EchoCapture()
        let server = try stubServer(origin.transport) {
            $0.cache = DataCache()
            $0.echoSink = capture.sink
            $0.defaultEchoStyle = .consoleMinimum
        }
        _ = try await CacheProbeTask(server: server, path: "echoed").download()
        _ = try await CacheProbeTask(server: server, path: "echoed").download()
        let lines = capture.text.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(!(try lines.required(0)).contains("cache"))
        #expect((try lines.required(1)).contains("GET https://stub.example/echoed → 200"))
        #expect((try lines.required(1)).contains("· cache hit"))
    }

    @Test func withoutACacheNothingChanges() async throws {
        let origin = origin(headers: ["Cache-Control": "max-age=600", "ETag": "\"z\""])
        let server = try stubServer(origin.transport)
        for strategy in [CacheStrategy.localFirst, .remoteFirst, .skipLocal, .never] {
            let response = try await CacheProbeTask(server: server, path: "plain", strategy: strategy).download()
            #expect(response.cacheStatus == .network)
        }
        #expect(origin.count == 4)
        #expect(origin.requests.allSatisfy { $0.value(forHTTPHeaderField: "If-None-Match") == nil })
    }
}
