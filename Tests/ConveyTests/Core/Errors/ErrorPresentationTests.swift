import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Error presentation")
struct ErrorPresentationTests {
    @Test func cancellationIsNeverShown() {
        #expect(ConveyError.cancelled.displayMessage == nil)
        #expect(CancellationError().displayMessage == nil)
        #expect(ConveyError.cancelled.isCancellation)
        #expect(!ConveyError.serverDisabled(server: "S").isCancellation)
    }

    @Test func unauthorizedAndForbiddenReadDifferently() {
        let unauthorized = HTTPError(statusCode: 401)
        let forbidden = HTTPError(statusCode: 403)
        #expect(unauthorized.userMessage == "Please sign in again.")
        #expect(forbidden.userMessage == "You don't have permission to do that.")
        #expect(unauthorized.userMessage != forbidden.userMessage)
    }

    @Test func logDetailSaysWhatAndWhere() throws {
        let url = try #require(URL(string: "https://api.example/users/9"))
        let error = HTTPError(statusCode: 404, body: Data(#"{"error":"no such user"}"#.utf8), url: url, method: .delete)
        #expect(error.logDetail == #"HTTP 404 Not Found for DELETE https://api.example/users/9, body: {"error":"no such user"}"#)
        #expect(String(describing: error) == error.logDetail)
    }

    @Test func decodingDetailNamesTypePathAndBody() {
        let error = ConveyError.decodingFailed(typeName: "User", codingPath: "items[2].id", reason: "expected Int", bodyPrefix: "{...}", url: nil)
        #expect(error.logDetail == "Could not decode User at items[2].id from ?: expected Int. Body starts: {...}")
        #expect(error.displayMessage == "The server's answer couldn't be read.")
    }

    @Test func timeoutDetailNamesTheLimit() {
        let total = ConveyError.totalTimedOut(limit: .milliseconds(1500), url: URL(string: "http://h/x"))
        #expect(total.logDetail == "Timed out (total limit 1.50 s) for http://h/x")
        let attempt = ConveyError.attemptTimedOut(limit: .milliseconds(300), url: URL(string: "http://h/x"))
        #expect(attempt.logDetail == "Timed out (attempt limit 300.0 ms) for http://h/x")
    }

    @Test func foreignErrorsGetAGenericMessage() {
        struct Other: Error {}
        #expect(Other().displayMessage == "Something went wrong. Please try again.")
    }

    @Test(arguments: [(418, HTTPError.ClientError.imATeapot), (429, .tooManyRequests), (451, .unavailableForLegalReasons)])
    func clientErrorCasesMapBothWays(code: Int, error: HTTPError.ClientError) {
        #expect(HTTPError.ClientError(statusCode: code) == error)
        #expect(error.statusCode == code)
    }

    @Test func unnamedCodesKeepTheirNumber() {
        #expect(HTTPError.ServerError(statusCode: 599).statusCode == 599)
        #expect(HTTPError.ClientError(statusCode: 499) == .other(499))
    }
}
