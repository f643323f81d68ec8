#if os(Linux) && canImport(CConveyCurlShim)
import CConveyCurlShim
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// curl's failures as the URLErrors URLSession reports, so that the pipeline maps both alike.
struct CurlErrorsTests {
    @Test func failuresMapToURLSessionCodes() {
        let cases: [(CURLcode, Int, URLError.Code)] = [
            (CURLE_COULDNT_CONNECT, Int(ECONNREFUSED), .cannotConnectToHost),
            (CURLE_COULDNT_CONNECT, Int(ETIMEDOUT), .timedOut),
            (CURLE_COULDNT_RESOLVE_HOST, 0, .cannotFindHost),
            (CURLE_OPERATION_TIMEDOUT, 0, .timedOut),
            (CURLE_RECV_ERROR, Int(ECONNRESET), .networkConnectionLost),
            (CURLE_GOT_NOTHING, 0, .networkConnectionLost),
            (CURLE_PARTIAL_FILE, 0, .networkConnectionLost),
            (CURLE_PEER_FAILED_VERIFICATION, 0, .serverCertificateUntrusted),
            (CURLE_SSL_CONNECT_ERROR, 0, .secureConnectionFailed),
            (CURLE_BAD_CONTENT_ENCODING, 0, .cannotDecodeContentData),
            (CURLE_UNSUPPORTED_PROTOCOL, 0, .unsupportedURL),
            (CURLE_URL_MALFORMAT, 0, .badURL),
        ]
        for (code, osErrno, expected) in cases {
            #expect(CurlErrors.code(for: code, osErrno: osErrno, bodyReadFailed: false) == expected, "curl error \(code.rawValue)")
        }
    }

    @Test func aBodyThatCannotBeReadIsNamedAsSuch() {
        #expect(CurlErrors.code(for: CURLE_ABORTED_BY_CALLBACK, osErrno: 0, bodyReadFailed: true) == .cannotOpenFile)
        #expect(CurlErrors.code(for: CURLE_ABORTED_BY_CALLBACK, osErrno: 0, bodyReadFailed: false) == .unknown)
    }

    @Test func errorsCarryCurlsMessageAndTheURL() throws {
        let url = try #require(URL(string: "http://127.0.0.1:1/x"))
        let error = CurlErrors.urlError(for: CURLE_COULDNT_CONNECT, osErrno: Int(ECONNREFUSED),
                                        message: "Failed to connect to 127.0.0.1 port 1", url: url, bodyReadFailed: false)
        #expect(error.code == .cannotConnectToHost)
        #expect(error.localizedDescription.contains("Failed to connect"))
        #expect(error.failingURL == url)
    }
}
#endif
