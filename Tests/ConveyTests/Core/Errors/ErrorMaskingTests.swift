import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Every public text of every error type, checked for a URL password, a `?token=` value and a cookie.
@Suite("Error texts mask credentials")
struct ErrorMaskingTests {
    static let url = URL(string: "https://alice:pw-user1nfo@api.example/v1/items?token=tok-query&page=2")
    static let body = Data(#"{"headers": {"Cookie": "s=cookie-body"}, "next": "https://api.example/more?access_token=tok-body"}"#.utf8)
    static let secrets = ["pw-user1nfo", "tok-query", "cookie-body", "tok-body", "pw-redirect", "tok-redirect"]

    static let errors: [(name: String, error: any Error)] = [
        ("HTTPError", HTTPError(statusCode: 401, body: body, headers: ["Set-Cookie": "s=cookie-body"], url: url, method: .get)),
        ("invalidURL", ConveyError.invalidURL("https://alice:pw-user1nfo@api.example/?token=tok-query", reason: "bad")),
        ("attemptTimedOut", ConveyError.attemptTimedOut(limit: .seconds(5), url: url)),
        ("totalTimedOut", ConveyError.totalTimedOut(limit: .seconds(1), url: url)),
        ("transport", ConveyError.transport(.cannotConnect, url: url, code: -1004, reason: "refused")),
        ("refused redirect", ConveyError.transport(
            .redirectRefused, url: url, code: -1002, reason: "redirect to ftp://mallory:pw-redirect@evil.example/?token=tok-redirect refused")),
        ("decoding", ConveyError.decodingFailed(
            typeName: "User", codingPath: "", reason: "not an object", bodyPrefix: String(decoding: body, as: UTF8.self), url: url)),
        ("size limit", ConveyError.responseTooLarge(limit: 10, url: url, isHead: false)),
        ("head size limit", ConveyError.responseTooLarge(limit: 1, url: url, isHead: true)),
        ("download", ConveyError.downloadFailed(
            destination: URL(filePath: "/tmp/x"), reason: "the server's 206 for \(url?.absoluteString ?? "") did not continue the file")),
        ("not cached", ConveyError.notCached(url: url, reason: "no entry")),
        ("cache folder", ConveyError.cacheFolderUnavailable(folder: URL(filePath: "/tmp/cache"), reason: "see \(url?.absoluteString ?? "")")),
        ("header field", ConveyError.invalidHeaderField(name: "X-Next", source: "the task's headers", reason: "see https://alice:pw-user1nfo@h/")),
        ("encoding", ConveyError.encodingFailed(subject: "a form", reason: "field token=tok-query")),
    ]

    /// `description`, `localizedDescription`, `logDetail`, `userMessage`, `displayMessage`, and the
    /// forms `print` and string interpolation use.
    static func texts(of error: any Error) -> [String] {
        var texts = [String(describing: error), String(reflecting: error), "\(error)", error.localizedDescription, error.displayMessage ?? ""]
        if let convey = error as? ConveyError { texts += [convey.description, convey.logDetail, convey.userMessage ?? ""] }
        if let http = error as? HTTPError { texts += [http.description, http.logDetail, http.userMessage ?? ""] }
        return texts
    }

    @Test(arguments: errors.map(\.name))
    func everyTextOfTheErrorHidesTheSecrets(name: String) throws {
        let error = try #require(Self.errors.first { $0.name == name }?.error)

        for text in Self.texts(of: error) {
            #expect(Self.secrets.filter(text.contains) == [], "\(name): \(text)")
        }
    }

    @Test func theLogDetailSaysWhatAndWhereWithTheURLMasked() throws {
        let url = try #require(Self.url)
        #expect(ConveyError.totalTimedOut(limit: .seconds(1), url: url).logDetail
                    == "Timed out (total limit 1.00 s) for https://‹redacted›@api.example/v1/items?token=‹redacted›&page=2")
        #expect(ConveyError.responseTooLarge(limit: 1, url: url, isHead: true).logDetail
                    == "Response head from https://‹redacted›@api.example/v1/items?token=‹redacted›&page=2 exceeded the limit of 1 bytes; the transfer was stopped")
    }

    @Test func aBodyIsMaskedBeforeItIsCutSoNoPartOfASecretIsLeft() {
        let padding = String(repeating: "x", count: 280)
        let error = HTTPError(statusCode: 500, body: Data("\(padding) https://alice:pw-user1nfo@h.example/".utf8))

        #expect(!error.logDetail.contains("alice"))
        #expect(!error.logDetail.contains("pw-"))
    }
}
