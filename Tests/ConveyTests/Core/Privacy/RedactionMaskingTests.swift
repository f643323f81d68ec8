import Foundation
import Testing
import Convey

@Suite("Masking for records and tools")
struct RedactionMaskingTests {
    @Test func maskedURLHidesCredentialQueryParametersOnly() throws {
        let url = try #require(URL(string: "https://api.example/v1/items?page=2&api_key=k3y&q=a%20b#top"))

        #expect(Redaction.standard.maskedURL(url) == "https://api.example/v1/items?page=2&api_key=‹redacted›&q=a%20b#top")
        #expect(Redaction.none.maskedURL(url) == url.absoluteString)
    }

    @Test func maskedFieldsHideCredentialHeadersWhateverTheirCaseInOrder() {
        let fields: Headers = ["authorization": "Bearer t", "X-Session-Id": "s", "Accept": "application/json"]

        #expect(Array(Redaction.standard.maskedFields(fields))
                == [Header(name: "authorization", value: "‹redacted›"), Header(name: "X-Session-Id", value: "‹redacted›"),
                    Header(name: "Accept", value: "application/json")])
    }
}

@Suite("One masking rule for URLs, parameters, JSON fields and header lines")
struct RedactionRuleTests {
    let standard = Redaction.standard

    @Test func urlUserinfoIsMaskedWholeWithTheQueryValues() throws {
        let both = try #require(URL(string: "https://alice:s3cret@api.example:8443/v1?token=t0k&page=2#top"))
        let userOnly = try #require(URL(string: "https://ghp_abc123@github.example/repo.git"))

        #expect(standard.maskedURL(both) == "https://‹redacted›@api.example:8443/v1?token=‹redacted›&page=2#top")
        #expect(standard.maskedURL(userOnly) == "https://‹redacted›@github.example/repo.git")
        #expect(Redaction.none.maskedURL(both) == both.absoluteString)
    }

    @Test func freeTextHasEveryURLAndParameterMasked() {
        let text = #"redirect to ftp://mallory:pw0rd@evil.example/x?sig=abc refused; see http:\/\/bob:hunter2@h.example\/a and /next?token=t0k&page=2"#

        let masked = standard.maskedText(text)

        #expect(masked == #"redirect to ftp://‹redacted›@evil.example/x?sig=‹redacted› refused; see http:\/\/‹redacted›@h.example\/a and /next?token=‹redacted›&page=2"#)
    }

    @Test func aURLPercentEncodedInAQueryValueIsMaskedToo() throws {
        let url = try #require(URL(string: "http://h.example/redirect-to?url=ftp%3A%2F%2Fmallory%3Apw%40evil.example%2F%3Fsig%3Ds1&code=302&next=https%3a%2f%2fok.example%2F"))

        #expect(standard.maskedURL(url)
                == "http://h.example/redirect-to?url=ftp%3A%2F%2F%E2%80%B9redacted%E2%80%BA%40evil.example%2F%3Fsig%3D%E2%80%B9redacted%E2%80%BA&code=302&next=https%3a%2f%2fok.example%2F")
        #expect(standard.maskedText("see " + url.absoluteString) == "see " + standard.maskedURL(url))
    }

    @Test func jsonFieldsAndHeaderLinesInTextAreMaskedEvenWhenCutShort() {
        let body = "{\"Cookie\": \"s=c00kie\", \"name\": \"Ada\", \"password\": \"hunt"
        let lines = "Accept: */*\nCookie: s=c00kie\r\n  X-Auth-Token: abc\nmonkey=1 key=k3y"

        #expect(standard.maskedText(body) == "{\"Cookie\": \"‹redacted›\", \"name\": \"Ada\", \"password\": \"‹redacted›")
        #expect(standard.maskedText(lines) == "Accept: */*\nCookie: ‹redacted›\r\n  X-Auth-Token: ‹redacted›\nmonkey=1 key=‹redacted›")
    }

    @Test func textWithoutSecretsIsUnchanged() {
        let text = "Could not connect for http://h.example:80/a?page=2: refused (code -1004) — a=b, \"x\": \"y\"\nNote: ok"
        #expect(standard.maskedText(text) == text)
    }

    @Test func headerValuesCarryingURLsAreMasked() {
        let fields = Headers([Header(name: "Location", value: "https://u:pw@next.example/?access_token=a1"),
                                   Header(name: "Set-Cookie", value: "s=c00kie")])

        #expect(Array(standard.maskedFields(fields)) == [Header(name: "Location", value: "https://‹redacted›@next.example/?access_token=‹redacted›"),
                                                         Header(name: "Set-Cookie", value: "‹redacted›")])
        #expect(Array(standard.maskedFields(["Referer": "http://h.example/?token=t"])) == [Header(name: "Referer", value: "http://h.example/?token=‹redacted›")])
    }

    @Test func bodiesAreMaskedByKindAndBinaryIsNotText() {
        let json = Data(#"{"url": "http://a:b@h.example/?token=t", "args": {"token": "t"}, "n": 1}"#.utf8)
        let form = Data("a=1&password=p".utf8)
        let text = Data("see http://a:b@h.example/".utf8)

        #expect(standard.maskedBody(json, contentType: "application/json")
                == "{\n  \"args\" : {\n    \"token\" : \"‹redacted›\"\n  },\n  \"n\" : 1,\n  \"url\" : \"http://‹redacted›@h.example/?token=‹redacted›\"\n}")
        #expect(standard.maskedBody(form, contentType: "application/x-www-form-urlencoded") == "a=1&password=‹redacted›")
        #expect(standard.maskedBody(text, contentType: "text/plain") == "see http://‹redacted›@h.example/")
        #expect(standard.maskedBody(Data([0xFF, 0x00, 0x01]), contentType: nil) == nil)
    }

    @Test func headerAndRemoteDescriptionsMaskCredentials() throws {
        let remote = try #require(Remote(name: "api", string: "https://alice:s3cret@api.example"))

        #expect(Header(name: "Authorization", value: "Bearer s3cret").description == "Authorization: ‹redacted›")
        #expect(Header(name: "Accept", value: "text/plain").description == "Accept: text/plain")
        #expect(remote.description == "api (https://‹redacted›@api.example)")
    }
}
