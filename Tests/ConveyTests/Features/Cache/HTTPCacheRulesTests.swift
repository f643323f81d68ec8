import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("HTTP cache rules")
struct HTTPCacheRulesTests {
    private let url: URL

    init() throws {
        url = try testURL("https://example.com/items?page=2")
    }

    @Test func httpDatesParseInAllThreeFormats() {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.parse("Sat, 29 Feb 2020 23:59:59 GMT") == Date(timeIntervalSince1970: 1_583_020_799))
    }

    @Test func invalidHTTPDatesAreRejected() {
        for text in ["0", "-1", "", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 32 Nov 1994 08:49:37 GMT",
                     "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 1994 08:49 GMT"] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
    }

    @Test func cacheControlReadsDirectivesCaseInsensitivelyAndIgnoresQuotedCommas() {
        let control = CacheControl(#"Private, MAX-AGE=60, no-cache="Set-Cookie, X-Other", must-revalidate"#)
        #expect(control.maxAge == 60)
        #expect(!control.noCache)
        #expect(control.noCacheFields == ["set-cookie", "x-other"])
        #expect(control.mustRevalidate)
        #expect(control.explicitlyCacheable)
        #expect(!control.noStore)
        #expect(CacheControl("no-store").noStore)
        #expect(CacheControl("max-age=soon").maxAge == 0)
        #expect(CacheControl("max-age=30, max-age=90").maxAge == 30)
        #expect(CacheControl(nil) == CacheControl(""))
    }

    @Test func maxAgeGivesTheLifetimeAndAgeCountsTransitAndTheAgeHeader() {
        let now = Date()
        let entry = entry(headers: ["Cache-Control": "max-age=60", "Age": "15", "Date": httpDate(now)],
                          requestedAt: now.addingTimeInterval(-2), receivedAt: now)
        #expect(entry.freshnessLifetime == 60)
        #expect(abs(entry.age(at: now) - 17) < 1.01)
        #expect(entry.isFresh(at: now.addingTimeInterval(40)))
        #expect(!entry.isFresh(at: now.addingTimeInterval(44)))
    }

    @Test func expiresCountsFromTheDateHeaderAndAnInvalidExpiresIsAlreadyStale() {
        let now = Date()
        let expiring = entry(headers: ["Date": httpDate(now), "Expires": httpDate(now.addingTimeInterval(120))], receivedAt: now)
        #expect(abs(expiring.freshnessLifetime - 120) < 1.01)
        #expect(expiring.isFresh(at: now.addingTimeInterval(100)))
        let invalid = entry(headers: ["Date": httpDate(now), "Expires": "0"], receivedAt: now)
        #expect(invalid.freshnessLifetime == 0)
        #expect(!invalid.isFresh(at: now))
    }

    @Test func maxAgeWinsOverExpires() {
        let now = Date()
        let entry = entry(headers: ["Cache-Control": "max-age=5", "Expires": httpDate(now.addingTimeInterval(3600))], receivedAt: now)
        #expect(entry.freshnessLifetime == 5)
    }

    @Test func aResponseWithoutExplicitFreshnessIsStaleAtOnce() {
        let entry = entry(headers: ["ETag": "\"v1\"", "Last-Modified": httpDate(Date().addingTimeInterval(-86_400))])
        #expect(!entry.isFresh())
        #expect(entry.hasValidator)
        #expect(entry.isUsableWithoutServer())
    }

    @Test func noCacheAndMustRevalidateForbidServingStaleWithoutTheServer() {
        #expect(!entry(headers: ["Cache-Control": "no-cache, max-age=600"]).isFresh())
        #expect(!entry(headers: ["Cache-Control": "no-cache"]).isUsableWithoutServer())
        #expect(!entry(headers: ["Cache-Control": "must-revalidate, max-age=0"]).isUsableWithoutServer())
        #expect(entry(headers: ["Cache-Control": "must-revalidate, max-age=600"]).isUsableWithoutServer())
    }

    @Test func storabilityFollowsStatusAndDirectives() throws {
        let request = OutgoingRequest(url: url)
        func reason(_ status: Int, _ headers: [String: String], request: OutgoingRequest = OutgoingRequest(url: url)) throws -> String? {
            HTTPCacheRules.reasonNotToStore(request: request, head: ResponseHead(statusCode: status, fields: Headers(headers), url: url),
                                            requestControl: HTTPCacheRules.requestControl(request))
        }
        #expect(try reason(200, [:]) == nil)
        #expect(try reason(404, [:]) == nil)
        #expect(try reason(200, ["Cache-Control": "no-store"]) == "no-store")
        #expect(try reason(302, [:]) == "status 302 without explicit freshness")
        #expect(try reason(302, ["Cache-Control": "max-age=60"]) == nil)
        #expect(try reason(206, ["Cache-Control": "max-age=60"]) == "status 206 is not storable")
        #expect(try reason(200, ["Vary": "*"]) == "Vary: *")
        var noStoreRequest = request
        noStoreRequest.setValue("no-store", forHTTPHeaderField: "Cache-Control")
        #expect(try reason(200, [:], request: noStoreRequest) == "no-store")
    }

    @Test func aResponseFromARedirectIsNotStoredUnderTheOriginalURL() throws {
        let redirected = ResponseHead(statusCode: 200, url: try testURL("https://example.com/elsewhere"))
        let request = OutgoingRequest(url: url)
        #expect(HTTPCacheRules.reasonNotToStore(request: request, head: redirected, requestControl: CacheControl(nil))
                == "the response came through a redirect")
    }

    @Test func varyStoresTheNamedRequestHeadersAndMatchesOnlyTheSameValues() {
        var english = OutgoingRequest(url: url)
        english.setValue("en", forHTTPHeaderField: "Accept-Language")
        let varying = HTTPCacheRules.varyingHeaders(vary: "Accept-Language, X-Missing", request: english)
        #expect(varying == [.init(name: "accept-language", value: "en"), .init(name: "x-missing", value: nil)])
        let stored = entry(headers: [:], varying: varying)
        #expect(HTTPCacheRules.mismatch(of: stored, with: english, in: .anonymous) == nil)
        var french = english
        french.setValue("fr", forHTTPHeaderField: "Accept-Language")
        #expect(HTTPCacheRules.mismatch(of: stored, with: french, in: .anonymous) == "the stored response varies on accept-language and this request's value differs")
        var extra = english
        extra.setValue("1", forHTTPHeaderField: "X-Missing")
        #expect(HTTPCacheRules.mismatch(of: stored, with: extra, in: .anonymous) != nil)
    }

    @Test func aStoredResponseWithCredentialsMatchesOnlyItsOwnPartition() {
        let key = CachePartitionKey.random()
        var alice = OutgoingRequest(url: url)
        alice.setValue("Bearer alice", forHTTPHeaderField: "Authorization")
        let alicePartition = CredentialPartition(of: alice, credentials: .standard, key: key)
        let stored = CachedResponse(key: url.absoluteString, statusCode: 200, fields: [:], body: Data(), requestedAt: Date(), receivedAt: Date(),
                                    varyingRequestHeaders: [], credentialPartition: alicePartition.tag)
        #expect(HTTPCacheRules.mismatch(of: stored, with: alice, in: alicePartition) == nil)
        var bob = alice
        bob.setValue("Bearer bob", forHTTPHeaderField: "Authorization")
        #expect(HTTPCacheRules.mismatch(of: stored, with: bob, in: CredentialPartition(of: bob, credentials: .standard, key: key))
                == "the stored response belongs to other credentials")
        #expect(HTTPCacheRules.mismatch(of: stored, with: OutgoingRequest(url: url), in: .anonymous) == "the stored response belongs to other credentials")
    }

    @Test func setCookieIsNeverStored() {
        let stored = HTTPCacheRules.storedFields(of: ["Set-Cookie": "session=alice", "Cache-Control": "max-age=60", "X-Kept": "1"])
        #expect(!stored.contains(named: "Set-Cookie"))
        #expect(stored["X-Kept"] == "1")
    }

    @Test func a304UpdatesHeadersButNeverTheBodyDescription() {
        let merged = HTTPCacheRules.merge(["ETag": "\"v1\"", "Content-Length": "10", "Cache-Control": "max-age=1"] as Headers,
                                          with: ["etag": "\"v1\"", "Content-Length": "0", "cache-control": "max-age=60", "Connection": "close"] as Headers)
        #expect(merged["Content-Length"] == "10")
        #expect(merged.values(named: "Cache-Control") == ["max-age=60"])
        #expect(merged.map(\.name).contains("cache-control"))
        #expect(merged["Connection"] == nil)
    }

    @Test func a304ConfirmsTheStoredResponseOnlyWithAMatchingWeakOrStrongTag() throws {
        let stored = entry(headers: ["ETag": "W/\"v1\""])
        func confirms(_ headers: [String: String]) throws -> Bool {
            HTTPCacheRules.notModified(ResponseHead(statusCode: 304, fields: Headers(headers), url: url), confirms: stored)
        }
        #expect(try confirms(["ETag": "\"v1\""]))
        #expect(try confirms([:]))
        #expect(try !confirms(["ETag": "\"v2\""]))
    }

    @Test func theKeyIsTheWholeURLWithItsQueryButWithoutTheFragment() throws {
        #expect(CacheKey.key(for: try testURL("https://a.example/p?x=1#top"), method: .get) == "https://a.example/p?x=1")
        #expect(CacheKey.key(for: try testURL("https://a.example/p?x=2"), method: .get) != CacheKey.key(for: try testURL("https://a.example/p?x=1"), method: .get))
        #expect(CacheKey.key(for: try testURL("https://a.example/p"), method: .head) == "HEAD https://a.example/p")
    }

    private func entry(headers: [String: String], requestedAt: Date? = nil, receivedAt: Date = Date(),
                       varying: [CachedResponse.VaryingHeader] = []) -> CachedResponse {
        CachedResponse(key: url.absoluteString, statusCode: 200, fields: Headers(headers), body: Data("body".utf8),
                       requestedAt: requestedAt ?? receivedAt, receivedAt: receivedAt, varyingRequestHeaders: varying, credentialPartition: nil)
    }
}
