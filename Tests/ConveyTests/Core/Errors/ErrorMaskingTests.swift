import Foundation
import Testing
@_spi(Transport) @testable import Convey

/// Every public text of every error type, checked for a URL password, a `?token=` value and a cookie.
@Suite("Error texts mask credentials")
struct ErrorMaskingTests {
    static let url = URL(string: "https://alice:pw-user1nfo@api.example/v1/items?token=tok-query&page=2")
    static let body = Data(#"{"headers": {"Cookie": "s=cookie-body"}, "next": "https://api.example/more?access_token=tok-body"}"#.utf8)
    static let secrets = ["pw-user1nfo", "tok-query", "cookie-body", "tok-body", "pw-redirect", "tok-redirect"]

    static let errors: [(name: String, error: any Error)] = [
        ("HTTPError", HTTPError(statusCode: 401, body: body, headers: ["Set-Cookie": "s=cookie-body"], url: url, method: .get)),
        ("invalidURL", ConveyError.invalidURL("https://alice:pw-user1nfo@api.example/?token=tok-query", reason: "bad")),
        ("timedOut", ConveyError.timedOut(TimeoutFailure(kind: .attempt, limit: .seconds(5), url: url))),
        ("transport", ConveyError.transport(TransportFailure(kind: .cannotConnect, code: -1004, reason: "refused", url: url))),
        ("refused redirect", ConveyError.transport(TransportFailure(
            kind: .redirectRefused, code: -1002, reason: "redirect to ftp://mallory:pw-redirect@evil.example/?token=tok-redirect refused", url: url))),
        ("decoding", ConveyError.decodingFailed(DecodingFailure(
            typeName: "User", codingPath: "", reason: "not an object", bodyPrefix: String(decoding: body, as: UTF8.self), url: url))),
        ("size limit", ConveyError.responseTooLarge(SizeLimitFailure(part: .body, limit: 10, url: url))),
        ("download", ConveyError.downloadFailed(DownloadFailure(
            destination: URL(filePath: "/tmp/x"), reason: "the server's 206 for \(url?.absoluteString ?? "") did not continue the file"))),
        ("cache", ConveyError.cache(CacheFailure(kind: .notCached, url: url, reason: "no entry"))),
        ("header field", ConveyError.invalidHeaderField(HeaderFieldFailure(source: .taskHeaders, name: "X-Next", reason: "see https://alice:pw-user1nfo@h/"))),
        ("encoding", ConveyError.encodingFailed(EncodingFailure(subject: "a form", reason: "field token=tok-query"))),
    ]

    /// `description`, `localizedDescription`, `logDetail`, `userMessage`, `displayMessage`, and the
    /// forms `print` and string interpolation use.
    static func texts(of error: any Error) -> [String] {
        var texts = [String(describing: error), String(reflecting: error), "\(error)", error.localizedDescription, error.displayMessage ?? ""]
        if let presentable = error as? any PresentableError { texts += [presentable.description, presentable.logDetail, presentable.userMessage ?? ""] }
        return texts
    }

    @Test(arguments: errors.map(\.name))
    func everyTextOfTheErrorHidesTheSecrets(name: String) throws {
        let error = try #require(Self.errors.first { $0.name == name }?.error)

        for text in Self.texts(of: error) {
            #expect(Self.secrets.filter(text.contains) == [], "\(name): \(text)")
        }
    }

    @Test func theFailureTypesDescribeThemselvesMasked() throws {
        let url = try #require(Self.url)
        let descriptions = [
            TimeoutFailure(kind: .total, limit: .seconds(1), url: url).description,
            TransportFailure(kind: .connectionLost, code: -1005, reason: "reset", url: url).description,
            SizeLimitFailure(part: .head, limit: 1, url: url).description,
            DecodingFailure(typeName: "T", codingPath: "a", reason: "r", bodyPrefix: "token=tok-body", url: url).description,
            DownloadFailure(destination: URL(filePath: "/tmp/x"), reason: "from \(url.absoluteString)").description,
            CacheFailure(kind: .notCached, url: url, reason: "no entry").description,
        ]

        #expect(descriptions[0] == "Timed out (total limit 1.00 s) for https://‹redacted›@api.example/v1/items?token=‹redacted›&page=2")
        for text in descriptions { #expect(Self.secrets.filter(text.contains) == [], "\(text)") }
    }

    @Test func aBodyIsMaskedBeforeItIsCutSoNoPartOfASecretIsLeft() {
        let padding = String(repeating: "x", count: 280)
        let error = HTTPError(statusCode: 500, body: Data("\(padding) https://alice:pw-user1nfo@h.example/".utf8))

        #expect(!error.logDetail.contains("alice"))
        #expect(!error.logDetail.contains("pw-"))
    }
}
