import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Transport failures by kind: each its own sentence, and `RetryPolicy` deciding by kind.
struct TransportFailureKindTests {
    @Test func urlErrorCodesMapToKinds() {
        let cases: [(URLError.Code, TransportFailure)] = [
            (.cannotConnectToHost, .cannotConnect), (.cannotFindHost, .cannotConnect), (.notConnectedToInternet, .cannotConnect),
            (.serverCertificateUntrusted, .secureConnectionFailed), (.secureConnectionFailed, .secureConnectionFailed),
            (.networkConnectionLost, .connectionLost), (.badServerResponse, .malformedResponse),
            (.cannotDecodeContentData, .malformedResponse), (.dataLengthExceedsMaximum, .tooLarge),
            (.httpTooManyRedirects, .redirectRefused), (.unsupportedURL, .unsupportedURL), (.unknown, .other),
        ]
        for (code, kind) in cases {
            #expect(TransportFailure(urlErrorCode: code.rawValue) == kind, "\(code)")
        }
    }

    @Test func everyKindHasItsOwnSentence() {
        let sentences = Set(TransportFailure.allCases.map(\.userMessage))
        #expect(sentences.count == TransportFailure.allCases.count)
    }

    @Test func theLogDetailNamesTheKindTheURLAndTheCode() throws {
        let url = try #require(URL(string: "https://api.example/x"))
        let error = ConveyError.transport(urlErrorCode: URLError.badServerResponse.rawValue, reason: "Weird server reply", url: url)
        #expect(error.logDetail == "Malformed response for https://api.example/x: Weird server reply (code -1011)")
        #expect(error.userMessage == "The server sent an answer that couldn't be understood.")
    }

    @Test func retriesFollowTheKind() {
        let policy = RetryPolicy.standard
        func failure(_ kind: TransportFailure) -> ConveyError {
            .transport(kind, url: nil, code: 0, reason: "")
        }
        #expect(policy.isTransient(failure(.cannotConnect)))
        #expect(policy.isTransient(failure(.connectionLost)))
        #expect(policy.isTransient(failure(.notResent)))
        for kind in [TransportFailure.secureConnectionFailed, .malformedResponse, .tooLarge, .redirectRefused, .unsupportedURL, .other] {
            #expect(!policy.isTransient(failure(kind)), "\(kind)")
        }
        #expect(policy.retryInterval(afterError: failure(.notResent), count: 1, method: .post) == nil)
        #expect(policy.retryInterval(afterError: failure(.connectionLost), count: 1, method: .get) != nil)
    }

    @Test func libcurlMessagesNameTheFault() {
        #expect(LibcurlMessages.code(for: "transfer closed with 500 bytes remaining to read") == .networkConnectionLost)
        #expect(LibcurlMessages.code(for: "Received HTTP/0.9 when not allowed") == .badServerResponse)
        #expect(LibcurlMessages.code(for: "Illegal or missing hexadecimal sequence in chunked-encoding") == .badServerResponse)
        #expect(LibcurlMessages.code(for: "Failed to connect to 127.0.0.1 port 9") == nil)
    }
}
