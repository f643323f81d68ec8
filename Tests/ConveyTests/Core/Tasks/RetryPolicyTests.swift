import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Retry policy")
struct RetryPolicyTests {
    let exact = RetryPolicy(maxAttempts: 4, baseDelay: .seconds(1), maxDelay: .seconds(3), jitter: 0)

    @Test func backoffDoublesUpToTheCapAndStopsAtMaxAttempts() {
        let error = HTTPError(statusCode: 503)
        #expect(exact.retryInterval(afterError: error, count: 1, method: .get) == 1)
        #expect(exact.retryInterval(afterError: error, count: 2, method: .get) == 2)
        #expect(exact.retryInterval(afterError: error, count: 3, method: .get) == 3)
        #expect(exact.retryInterval(afterError: error, count: 4, method: .get) == nil)
    }

    @Test func jitterOnlyShortensTheWaitWithinItsFraction() {
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: .seconds(2), jitter: 0.5)
        for _ in 0..<200 {
            let wait = policy.retryInterval(afterError: HTTPError(statusCode: 500), count: 1, method: .get) ?? -1
            #expect(wait >= 1 && wait <= 2)
        }
    }

    @Test(arguments: [408, 425, 429, 500, 502, 503, 504])
    func transientStatusesAreRetried(status: Int) {
        #expect(exact.retryInterval(afterError: HTTPError(statusCode: status), count: 1, method: .get) != nil)
    }

    @Test(arguments: [400, 401, 403, 404, 409, 422, 501])
    func permanentStatusesAreNot(status: Int) {
        #expect(exact.retryInterval(afterError: HTTPError(statusCode: status), count: 1, method: .get) == nil)
    }

    @Test func onlyIdempotentMethodsUnlessToldOtherwise() {
        let error = HTTPError(statusCode: 503)
        #expect(exact.retryInterval(afterError: error, count: 1, method: .post) == nil)
        #expect(exact.retryInterval(afterError: error, count: 1, method: .patch) == nil)
        #expect(exact.retryInterval(afterError: error, count: 1, method: .put) == 1)
        #expect(exact.retryInterval(afterError: error, count: 1, method: .delete) == 1)
        var bold = exact
        bold.retriesNonIdempotentMethods = true
        #expect(bold.retryInterval(afterError: error, count: 1, method: .post) == 1)
    }

    @Test func connectionFailuresAndAttemptTimeoutsAreTransientButOthersAreNot() {
        let lost = ConveyError.transport(urlErrorCode: URLError.networkConnectionLost.rawValue, reason: "", url: nil)
        let badTLS = ConveyError.transport(urlErrorCode: URLError.serverCertificateUntrusted.rawValue, reason: "", url: nil)
        let attempt = ConveyError.attemptTimedOut(limit: .seconds(1), url: nil)
        let total = ConveyError.totalTimedOut(limit: .seconds(1), url: nil)
        #expect(exact.isTransient(lost))
        #expect(exact.isTransient(attempt))
        #expect(!exact.isTransient(badTLS))
        #expect(!exact.isTransient(total))
        #expect(!exact.isTransient(ConveyError.cancelled))
        #expect(!exact.isTransient(ConveyError.decodingFailed(typeName: "T", codingPath: "", reason: "", bodyPrefix: "", url: nil)))
    }

    @Test func retryAfterSecondsReplaceTheBackoff() {
        let error = HTTPError(statusCode: 429, headers: ["retry-after": "7"])
        #expect(exact.retryInterval(afterError: error, count: 1, method: .get) == 7)
    }

    @Test func retryAfterDateIsMeasuredFromNow() throws {
        let now = try #require(RetryAfter.httpDate("Sun, 06 Nov 1994 08:49:37 GMT"))
        let error = HTTPError(statusCode: 503, headers: ["Retry-After": "Sun, 06 Nov 1994 08:50:07 GMT"])
        #expect(exact.retryInterval(afterError: error, count: 1, method: .get, now: now) == 30)
    }

    @Test func retryAfterLongerThanAllowedEndsTheRetries() {
        let error = HTTPError(statusCode: 503, headers: ["Retry-After": "3600"])
        #expect(exact.retryInterval(afterError: error, count: 1, method: .get) == nil)
    }

    @Test func unreadableRetryAfterFallsBackToBackoff() {
        let error = HTTPError(statusCode: 503, headers: ["Retry-After": "soon"])
        #expect(exact.retryInterval(afterError: error, count: 2, method: .get) == 2)
    }

    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"])
    func allThreeHTTPDateFormsParse(text: String) {
        #expect(RetryAfter.httpDate(text)?.timeIntervalSince1970 == 784111777)
    }

    @Test func pastDatesWaitNothingAndNegativeSecondsAreInvalid() {
        #expect(RetryAfter.seconds(from: "Sun, 06 Nov 1994 08:49:37 GMT", now: Date()) == 0)
        #expect(RetryAfter.seconds(from: "-5", now: Date()) == nil)
        #expect(RetryAfter.seconds(from: " 12 ", now: Date()) == 12)
    }
}
