import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Signs each request exactly as it goes out: method, path and a `Date` field under an HMAC key
/// the fault server's `/signed` shares, logging the hops it signed.
private struct Signing: Interceptor {
    let key: [UInt8]
    let log: EventLog

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        var signed = request
        let date = Date.now.ISO8601Format()
        signed.setValue(date, forHTTPHeaderField: "Date")
        let path = request.url.path(percentEncoded: true)
        signed.setValue(SHA256.authenticationCode(key: key, message: Array("\(request.method.rawValue) \(path)\n\(date)".utf8)),
                        forHTTPHeaderField: "Signature")
        log.add("signed \(request.url.host() ?? "") \(path) authorization: \(request.fields["Authorization"] != nil)")
        return try await next(signed)
    }
}

private struct Verified: Decodable, Sendable {
    let verified: Bool
    let authorization: Bool
}

/// A task that carries a credential to httpbin, which redirects it to another origin.
private struct CrossOriginSigned: DownloadingTask {
    typealias DownloadPayload = Verified
    let server: ConveyServer
    let target: URL
    var path: String { "redirect-to" }
    var queryParameters: [String: String]? { ["url": target.absoluteString, "status_code": "302"] }
    var headers: Headers { get async throws { ["Authorization": "Bearer first-origin-only"] } }
}

@Suite("Interceptors on the wire", .wire)
@ConveyActor
struct InterceptorWireTests {
    @Test(arguments: TransportKind.allCases)
    func anExchangeStepSignsTheFinalRequestAfterACrossOriginRedirect(_ kind: TransportKind) async throws {
        let log = EventLog()
        let server = try httpbinServer { $0.exchangeInterceptors = [Signing(key: Array("convey-signing-test-key".utf8), log: log)] }
        server.transport = kind.make()
        let signedURL = try TestServers.fault("/signed")
        let response = try await CrossOriginSigned(server: server, target: signedURL).download()
        #expect(response.payload.verified)
        #expect(!response.payload.authorization)
        let faultHost = signedURL.host() ?? ""
        #expect(log.events == ["signed 127.0.0.1 /redirect-to authorization: true", "signed \(faultHost) /signed authorization: false"])
    }
}
