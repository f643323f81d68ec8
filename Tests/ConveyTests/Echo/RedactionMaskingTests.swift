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

    @Test func maskedHeadersHideCredentialHeadersWhateverTheirCase() {
        let headers = ["authorization": "Bearer t", "X-Session-Id": "s", "Accept": "application/json"]

        #expect(Redaction.standard.maskedHeaders(headers)
                == ["authorization": "‹redacted›", "X-Session-Id": "‹redacted›", "Accept": "application/json"])
    }
}
