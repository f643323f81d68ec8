import Foundation
import Testing
@_spi(Tools) @testable import Convey

/// The attributes of a request as OpenTelemetry's HTTP client conventions name them, with
/// nothing secret in them.
@Suite("Span attributes")
struct SpanAttributesTests {
    private func attributes(_ url: String, method: HTTPMethod = .get, redaction: Redaction = .standard) throws -> SpanAttributes {
        SpanAttributes(request: OutgoingRequest(method: method, url: try #require(URL(string: url))), redaction: redaction)
    }

    @Test("url.full loses user info and fragment; hidden query values are REDACTED, others kept as sent")
    func fullURL() throws {
        let made = try attributes("https://ada:s3cret@api.example.com:8443/v1/items?page=2&token=abc&Signature=xyz&q=a%20b#access_token=frag")
        #expect(made.text["url.full"] == "https://api.example.com:8443/v1/items?page=2&token=REDACTED&Signature=REDACTED&q=a%20b")
        #expect(made.text["server.address"] == "api.example.com")
        #expect(made.integers["server.port"] == 8443)
    }

    @Test("The server's own Redaction decides which query values are hidden, besides the conventions' names")
    func serverRedaction() throws {
        var redaction = Redaction.standard
        redaction.queryNames.insert("session_id")
        let made = try attributes("http://h.example/a?session_id=1&sig=2&X-Goog-Signature=3&keep=4", redaction: redaction)
        #expect(made.text["url.full"] == "http://h.example/a?session_id=REDACTED&sig=REDACTED&X-Goog-Signature=REDACTED&keep=4")
        #expect(made.integers["server.port"] == 80)
    }

    @Test("A percent-encoded name is matched decoded")
    func encodedNames() throws {
        let made = try attributes("http://h.example/a?api%5Fkey=1&plain=2")
        #expect(made.text["url.full"] == "http://h.example/a?api%5Fkey=REDACTED&plain=2")
    }

    @Test("A method outside the conventions' list is _OTHER, with the original beside it")
    func otherMethod() throws {
        let made = try attributes("http://h.example/", method: HTTPMethod(rawValue: "PURGE"))
        #expect(made.text["http.request.method"] == "_OTHER")
        #expect(made.text["http.request.method_original"] == "PURGE")
        #expect(made.spanName == "HTTP")
        #expect(try attributes("http://h.example/", method: .patch).spanName == "PATCH")
    }

    @Test("An IPv6 host without its brackets")
    func ipv6() throws {
        #expect(try attributes("http://[::1]:8080/").text["server.address"] == "::1")
    }

    @Test("A status from 400 on is an error, with the status as error.type")
    func statuses() throws {
        var made = try attributes("http://h.example/")
        made.add(status: 302)
        #expect(!made.isError)
        #expect(made.text["error.type"] == nil)
        made.add(status: 429)
        #expect(made.isError)
        #expect(made.text["error.type"] == "429")
    }

    @Test("error.type: the ConveyError case, cancelled, an app's own type; messages masked")
    func thrownErrors() throws {
        #expect(SpanAttributes.errorType(ConveyError.attemptTimedOut(limit: .seconds(1), url: nil)) == "attemptTimedOut")
        #expect(SpanAttributes.errorType(ConveyError.cancelled) == "cancelled")
        #expect(SpanAttributes.errorType(CancellationError()) == "cancelled")
        struct SigningFailed: Error {}
        #expect(SpanAttributes.errorType(SigningFailed()).hasSuffix("SigningFailed"))
        var made = try attributes("http://h.example/")
        let url = try #require(URL(string: "http://h.example/a?token=abc"))
        made.add(ConveyError.transport(.cannotConnect, url: url, code: -1004, reason: "refused"), redaction: .standard)
        #expect(made.text["error.type"] == "transport")
        #expect(made.isError)
        #expect(made.statusMessage?.contains("abc") == false)
        made.add(ConveyError.decodingFailed(typeName: "Item", codingPath: "id", reason: "not a number", bodyPrefix: #"{"password":"p"}"#, url: url),
                 redaction: .standard)
        #expect(made.statusMessage == "Could not decode Item at id: not a number")
    }

    @Test("network.protocol.version from the status line's protocol")
    func protocolVersion() {
        #expect(SpanAttributes.protocolVersion("HTTP/1.1") == "1.1")
        #expect(SpanAttributes.protocolVersion("HTTP/2") == "2")
        #expect(SpanAttributes.protocolVersion("SPDY") == nil)
    }

    @Test("Every ConveyError case has its own name")
    func caseNames() {
        let url = URL(string: "http://h.example/")
        let errors: [ConveyError] = [
            .invalidURL("x", reason: "r"), .noRemote(server: "s"), .serverDisabled(server: "s"), .requestsDisabledForDebugging,
            .transport(.other, url: url, code: 1, reason: "r"), .attemptTimedOut(limit: .seconds(1), url: url),
            .totalTimedOut(limit: .seconds(1), url: url), .cancelled,
        ]
        #expect(errors.map(\.caseName) == ["invalidURL", "noRemote", "serverDisabled", "requestsDisabledForDebugging", "transport",
                                           "attemptTimedOut", "totalTimedOut", "cancelled"])
    }
}
