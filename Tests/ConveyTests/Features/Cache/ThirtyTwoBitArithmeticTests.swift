import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Arithmetic that must hold where `Int` has 32 bits (watchOS on arm64_32 and armv7k): dates
/// outside 1901–2038 and a disk tier's running size near `Int.max`, counted without overflow.
@Suite("32-bit arithmetic: HTTP dates and the disk tier's size")
struct ThirtyTwoBitArithmeticTests {
    @Test func secondsOfDatesOutsideThe32BitRangeAreCountedIn64Bits() {
        let late: Int64 = HTTPDate.secondsSince1970(year: 2099, month: 12, day: 31, hours: 23, minutes: 59, seconds: 59)
        let early: Int64 = HTTPDate.secondsSince1970(year: 1800, month: 1, day: 1, hours: 0, minutes: 0, seconds: 0)
        #expect(late == 4_102_444_799)
        #expect(early == -5_364_662_400)
        // Both lie outside what a 32-bit `Int` holds: computed in `Int` there, each would trap.
        #expect(late > Int64(Int32.max))
        #expect(early < Int64(Int32.min))
        #expect(HTTPDate.secondsSince1970(year: 2038, month: 1, day: 19, hours: 3, minutes: 14, seconds: 8) == Int64(Int32.max) + 1)
    }

    @Test(arguments: ["Thu, 31 Dec 2099 23:59:59 GMT", "Thursday, 31-Dec-99 23:59:59 GMT", "Thu Dec 31 23:59:59 2099"])
    func aDateIn2099ParsesInEveryForm(text: String) throws {
        // RFC 850's two-digit year is the most recent past year with those digits unless that is
        // more than 50 years ahead: "99" is 2099 only until 2049, so that form is checked by its own rule.
        let parsed = try #require(HTTPDate.parse(text))
        if text.contains("-99") {
            #expect([4_102_444_799, 946_684_799].contains(parsed.timeIntervalSince1970))
        } else {
            #expect(parsed.timeIntervalSince1970 == 4_102_444_799)
        }
    }

    @Test func aDateIn1800Parses() {
        #expect(HTTPDate.parse("Wed, 01 Jan 1800 00:00:00 GMT")?.timeIntervalSince1970 == -5_364_662_400)
        #expect(HTTPDate.parse("Wed Jan  1 00:00:00 1800")?.timeIntervalSince1970 == -5_364_662_400)
    }

    @Test func aCachedResponseExpiringIn2099IsFreshUntilThenAndALastModifiedIn1800IsItsHeuristicBase() {
        let receivedAt = Date(timeIntervalSince1970: 1_700_000_000)
        let expiring = CachedResponse(key: "k", statusCode: 200, fields: ["Expires": "Thu, 31 Dec 2099 23:59:59 GMT"], body: Data(),
                                      requestedAt: receivedAt, receivedAt: receivedAt, varyingRequestHeaders: [], credentialPartition: nil)
        #expect(expiring.freshnessLifetime == 4_102_444_799 - 1_700_000_000)
        let old = CachedResponse(key: "k", statusCode: 200, fields: ["Last-Modified": "Wed, 01 Jan 1800 00:00:00 GMT"], body: Data(),
                                 requestedAt: receivedAt, receivedAt: receivedAt, varyingRequestHeaders: [], credentialPartition: nil)
        // A tenth of the time since 1800, without a cap: the base itself, read from the 1800 date.
        let lifetime = old.lifetime(heuristic: HeuristicFreshness(fraction: 0.1, maximumLifetime: .infinity))
        #expect(lifetime.isHeuristic)
        #expect(lifetime.seconds == (1_700_000_000 + 5_364_662_400) * 0.1)
    }

    @Test func theDiskTiersRunningSizeStopsAtIntMaxInsteadOfOverflowing() {
        #expect(DiskTier.runningSize(Int.max - 10, adding: 100) == Int.max)
        #expect(DiskTier.runningSize(Int.max, adding: Int.max) == Int.max)
        #expect(DiskTier.runningSize(1_000, adding: 24) == 1_024)
    }
}
