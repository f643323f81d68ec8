import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// RFC 9111 (and RFC 9110 §5.6.7, RFC 5861, RFC 8246) clause by clause, on the rules alone:
/// every test names the clause it checks. Time is a fixed instant, never the wall clock.
@Suite("RFC 9111 rules")
struct RFC9111RuleTests {
    private let url: URL
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    init() throws {
        url = try testURL("https://example.com/resource")
    }

    private func entry(_ fields: Headers, status: Int = 200, receivedAt: Date? = nil) -> CachedResponse {
        let received = receivedAt ?? now
        return CachedResponse(key: url.absoluteString, statusCode: status, fields: fields, body: Data("body".utf8),
                              requestedAt: received, receivedAt: received, varyingRequestHeaders: [], credentialPartition: nil)
    }

    private func head(_ status: Int = 200, _ fields: Headers) -> ResponseHead {
        ResponseHead(statusCode: status, fields: fields, url: url)
    }

    // MARK: §5.1 Age

    @Test func rfc9111_5_1_ageIsANonNegativeIntegerAndAnythingElseIsIgnored() {
        #expect(CachedResponse.ageValue(of: ["Age": "7200"]) == 7200)
        #expect(CachedResponse.ageValue(of: ["Age": " 30 "]) == 30)
        for invalid in ["7200.0", "-1", "soon", "", "1e3", "+5"] {
            #expect(CachedResponse.ageValue(of: ["Age": invalid]) == nil, "\(invalid)")
        }
        #expect(CachedResponse.ageValue(of: [:]) == nil)
    }

    @Test func rfc9111_5_1_theFirstValueOfAListOrOfRepeatedAgeFieldsCounts() {
        #expect(CachedResponse.ageValue(of: ["Age": "7200, 0"]) == 7200)
        let repeated = Headers(lines: [Header(name: "Age", value: "7200"), Header(name: "age", value: "0")])
        #expect(CachedResponse.ageValue(of: repeated) == 7200)
        let stale = entry(["Cache-Control": "max-age=3600", "Age": "7200, 0"])
        #expect(!stale.isFresh(at: now))
        #expect(!entry(Headers(lines: [Header(name: "Cache-Control", value: "max-age=3600"), Header(name: "Age", value: "7200"),
                                    Header(name: "Age", value: "0")])).isFresh(at: now))
    }

    @Test func rfc9111_5_1_anInvalidAgeCountsAsNoAgeNotAsItsNumericPrefix() {
        let response = entry(["Cache-Control": "max-age=3600", "Age": "7200.0"])
        #expect(response.isFresh(at: now))
        #expect(response.age(at: now) == 0)
    }

    // MARK: RFC 9110 §5.6.7 dates, RFC 9111 §5.3 Expires

    @Test func rfc9110_5_6_7_theThreeFormatsParseExactlyAndLetterCaseIsLenient() {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("sun, 06 NOV 1994 08:49:37 gmt") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.parse("Sun Nov 16 08:49:37 1994") == Date(timeIntervalSince1970: 784_111_777 + 10 * 86_400))
    }

    @Test func rfc9110_5_6_7_malformedDatesAreRejected() {
        for text in [
            "Sun, 06 Nov 94 08:49:37 GMT",       // two-digit year in IMF-fixdate
            "Sun 06 Nov 1994 08:49:37 GMT",      // missing comma
            "Sun,  06 Nov 1994 08:49:37 GMT",    // doubled space
            "Sun, 06-Nov-1994 08:49:37 GMT",     // dashes in IMF-fixdate
            "Sun, 6 Nov 1994 08:49:37 GMT",      // one-digit day
            "Sun, 06 Nov 1994 8:49:37 GMT",      // one-digit hour
            "Sun, 31 Apr 1994 08:49:37 GMT",     // no 31 April
            "Mon, 29 Feb 2021 08:49:37 GMT",     // not a leap year
            "Sunday, 06 Nov 1994 08:49:37 GMT",  // long day name in IMF-fixdate
            "Sun, 06-Nov-94 08:49:37 GMT",       // short day name in RFC 850
            "Sun Nov 6 08:49:37 1994",           // asctime day without its padding space
            "Sun, 06 Nov 1994 08:49:37 GMT ",    // trailing space
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
    }

    @Test func rfc9111_5_3_anInvalidExpiresMeansAlreadyExpired() {
        for expires in ["0", "-1", "Sun, 06 Nov 94 08:49:37 GMT", "Sun,  06 Nov 2094 08:49:37 GMT", "tomorrow"] {
            let response = entry(["Expires": expires, "Date": httpDate(now)])
            #expect(!response.isFresh(at: now), "\(expires)")
            #expect(response.freshnessLifetime == 0)
        }
        #expect(entry(["Expires": httpDate(now + 60), "Date": httpDate(now)]).isFresh(at: now))
    }

    // MARK: §3.1 storing header fields

    @Test func rfc9111_3_1_fieldsNamedByConnectionAreNotStored() {
        let stored = HTTPCacheRules.storedFields(of: Headers(lines: [
            Header(name: "Connection", value: "a, B"), Header(name: "a", value: "1"), Header(name: "b", value: "2"),
            Header(name: "Keep-Alive", value: "timeout=5"), Header(name: "c", value: "3"),
        ]))
        #expect(stored.map(\.name) == ["c"])
    }

    @Test func rfc9111_3_1_repeatedFieldsAreStoredInOrder() {
        let stored = HTTPCacheRules.storedFields(of: Headers(lines: [
            Header(name: "Link", value: "<a>"), Header(name: "X", value: "1"), Header(name: "Link", value: "<b>"),
        ]))
        #expect(stored.values(named: "Link") == ["<a>", "<b>"])
    }

    // MARK: §5.2.2 response directives

    @Test func rfc9111_5_2_2_3_mustUnderstandStoresAnUnderstoodStatusDespiteNoStore() {
        let control = CacheControl(nil)
        let request = OutgoingRequest(url: url)
        #expect(HTTPCacheRules.reasonNotToStore(request: request, head: head(200, ["Cache-Control": "must-understand, no-store, max-age=60"]),
                                                requestControl: control) == nil)
        #expect(HTTPCacheRules.reasonNotToStore(request: request, head: head(299, ["Cache-Control": "must-understand, no-store, max-age=60"]),
                                                requestControl: control) != nil)
        #expect(HTTPCacheRules.reasonNotToStore(request: request, head: head(200, ["Cache-Control": "no-store"]), requestControl: control) == "no-store")
    }

    @Test func rfc9111_5_2_2_4_qualifiedNoCacheStoresTheResponseWithoutTheNamedFields() {
        let fields: Headers = ["Cache-Control": #"no-cache="Set-Cookie, X-Secret", max-age=60"#, "Set-Cookie": "a=1", "X-Secret": "s", "X-Kept": "k"]
        let stored = HTTPCacheRules.storedFields(of: fields)
        #expect(!stored.contains(named: "Set-Cookie"))
        #expect(!stored.contains(named: "X-Secret"))
        #expect(stored["X-Kept"] == "k")
        #expect(entry(stored).isFresh(at: now))
    }

    @Test func rfc9111_5_2_2_7_qualifiedPrivateIsStorableByAPrivateCache() {
        let fields: Headers = ["Cache-Control": #"private="X-User""#, "X-User": "u"]
        #expect(HTTPCacheRules.reasonNotToStore(request: OutgoingRequest(url: url), head: head(302, fields), requestControl: CacheControl(nil)) == nil)
        #expect(HTTPCacheRules.storedFields(of: fields)["X-User"] == "u")
    }

    @Test func rfc8246_immutableIsReadAndKeepsQuotedArguments() {
        let control = CacheControl(#"max-age=60, IMMUTABLE, stale-while-revalidate=30, stale-if-error="90""#)
        #expect(control.immutable)
        #expect(control.staleWhileRevalidate == 30)
        #expect(control.staleIfError == 90)
    }

    // MARK: §5.2.1 request directives

    @Test func rfc9111_5_2_1_requestMaxStaleMinFreshAndOnlyIfCachedAreRead() {
        #expect(CacheControl("max-stale").maxStale == .infinity)
        #expect(CacheControl("max-stale=30").maxStale == 30)
        #expect(CacheControl("max-stale=soon").maxStale == nil)
        #expect(CacheControl("min-fresh=10").minFresh == 10)
        #expect(CacheControl("only-if-cached").onlyIfCached)
        #expect(CacheControl("max-age=99999999999999999999").maxAge == 2_147_483_647)
    }

    // MARK: §4.2.2 heuristic freshness

    @Test func rfc9111_4_2_2_heuristicLifetimeIsAShareOfTheTimeSinceLastModifiedCapped() {
        let response = entry(["Date": httpDate(now), "Last-Modified": httpDate(now - 10_000)])
        #expect(!response.isFresh(at: now, heuristic: nil))
        #expect(response.lifetime(heuristic: .standard) == (1000, true))
        #expect(response.isFresh(at: now + 999, heuristic: .standard))
        #expect(!response.isFresh(at: now + 1001, heuristic: .standard))
        let old = entry(["Date": httpDate(now), "Last-Modified": httpDate(now - 100 * 86_400)])
        #expect(old.lifetime(heuristic: .standard).seconds == 86_400)
        #expect(old.lifetime(heuristic: HeuristicFreshness(fraction: 0.1, maximumLifetime: 60)).seconds == 60)
    }

    @Test func rfc9111_4_2_2_heuristicsNeverApplyWithExplicitFreshnessOrToOtherStatuses() {
        let explicit = entry(["Date": httpDate(now), "Last-Modified": httpDate(now - 10_000), "Cache-Control": "max-age=5"])
        #expect(explicit.lifetime(heuristic: .standard) == (5, false))
        let notHeuristic = entry(["Date": httpDate(now), "Last-Modified": httpDate(now - 10_000)], status: 302)
        #expect(notHeuristic.lifetime(heuristic: .standard) == (0, false))
        #expect(entry(["Date": httpDate(now)]).lifetime(heuristic: .standard) == (0, false))
    }

    @Test func rfc9111_4_2_2_heuristicFreshnessCountsTheAge() {
        let aged = entry(["Date": httpDate(now), "Last-Modified": httpDate(now - 10_000), "Age": "900"])
        #expect(aged.isFresh(at: now + 50, heuristic: .standard))
        #expect(!aged.isFresh(at: now + 150, heuristic: .standard))
    }

    // MARK: §4.1 Vary

    @Test func rfc9111_4_1_varyValuesNormaliseWhitespaceCaseAndLanguageOrder() {
        #expect(HTTPCacheRules.normalisedVaryValue("  gzip,deflate ", name: "accept-encoding") == "gzip, deflate")
        #expect(HTTPCacheRules.normalisedVaryValue("GZIP,  Deflate", name: "accept-encoding") == "gzip, deflate")
        #expect(HTTPCacheRules.normalisedVaryValue("fr, en-US", name: "accept-language")
                == HTTPCacheRules.normalisedVaryValue("en-us,fr", name: "accept-language"))
        #expect(HTTPCacheRules.normalisedVaryValue("Token  A", name: "x-custom") == "Token A")
        #expect(HTTPCacheRules.normalisedVaryValue("b, a", name: "accept-encoding") == "b, a")

        var stored = OutgoingRequest(url: url)
        stored.setValue("en, fr", forHTTPHeaderField: "Accept-Language")
        let cached = CachedResponse(key: url.absoluteString, statusCode: 200, fields: ["Vary": "Accept-Language"], body: Data(),
                                    requestedAt: now, receivedAt: now,
                                    varyingRequestHeaders: HTTPCacheRules.varyingHeaders(vary: "Accept-Language", request: stored),
                                    credentialPartition: nil)
        var reordered = OutgoingRequest(url: url)
        reordered.setValue("FR,en", forHTTPHeaderField: "Accept-Language")
        #expect(HTTPCacheRules.mismatch(of: cached, with: reordered, in: .anonymous) == nil)
    }

    // MARK: §3.2 304 updates

    @Test func rfc9111_3_2_a304ReplacesEveryStoredLineOfANameItCarries() {
        let stored = Headers(lines: [Header(name: "Link", value: "<a>"), Header(name: "Link", value: "<b>"), Header(name: "X", value: "1")])
        let merged = HTTPCacheRules.merge(stored, with: ["link": "<c>"])
        #expect(merged.values(named: "Link") == ["<c>"])
        #expect(merged["X"] == "1")
    }
}
