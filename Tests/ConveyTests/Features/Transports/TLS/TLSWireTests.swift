#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Trust, pinning, TLS versions and client certificates against the test CA's nginx servers, on
/// `CurlTransport` (URLSession on Linux has no hook for any of them: see `URLSessionTLSTests`).
@Suite("TLS on the wire", .wire)
@ConveyActor
struct TLSWireTests {
    private func transport(_ tls: TLSConfiguration, httpVersion: HTTPVersionPreference = .automatic) -> CurlTransport {
        CurlTransport(configuration: .init(tls: tls, httpVersion: httpVersion))
    }

    private func body(_ response: TransportResponse) -> String { String(decoding: response.data, as: UTF8.self) }

    // MARK: Trust

    @Test func aServerSignedByTheTrustedCAIsReachedOverHTTP2() async throws {
        let response = try await transport(try TLSTestServers.trustingTheCA()).send(try TLSTestServers.trusted("/hello.txt"))
        #expect(response.head.statusCode == 200)
        #expect(body(response) == "Hello from nginx\n")
        #expect(response.metrics.httpVersion == "HTTP/2")
    }

    @Test func theCAAddedToTheSystemsStoreIsTrustedToo() async throws {
        let tls = TLSConfiguration(trustRoots: .systemAnd(certificatesFile: try TLSTestServers.file("ca.crt")))
        let response = try await transport(tls).send(try TLSTestServers.trusted("/hello.txt"))
        #expect(response.head.statusCode == 200)
    }

    @Test func aServerFromAnotherCAIsUntrustedAndTheErrorNamesTheCheckAndHost() async throws {
        let tls = TLSConfiguration(trustRoots: .only(certificatesFile: try TLSTestServers.file("client-ca.crt")))
        let error = await #expect(throws: URLError.self) { try await transport(tls).send(try TLSTestServers.trusted("/hello.txt")) }
        #expect(error?.code == .serverCertificateUntrusted)
        #expect(error?.localizedDescription.hasPrefix("Certificate verification failed for 127.0.0.1:") == true)
    }

    @Test func theSystemsStoreAloneDoesNotTrustTheTestCA() async throws {
        let error = await #expect(throws: URLError.self) {
            try await transport(TLSConfiguration()).send(try TLSTestServers.trusted("/hello.txt"))
        }
        #expect(TransportFailure(urlErrorCode: error?.code.rawValue ?? 0) == .secureConnectionFailed)
    }

    @Test func anExpiredCertificateFailsAsABadDate() async throws {
        let error = await #expect(throws: URLError.self) {
            try await transport(try TLSTestServers.trustingTheCA()).send(try TLSTestServers.url("CONVEY_TLS_EXPIRED_URL", "/hello.txt"))
        }
        #expect(error?.code == .serverCertificateHasBadDate)
        #expect(error?.localizedDescription.contains("expired") == true)
    }

    @Test func turningVerificationOffReachesTheExpiredServer() async throws {
        let tls = TLSConfiguration(disablesCertificateVerificationInsecurely: true)
        let response = try await transport(tls).send(try TLSTestServers.url("CONVEY_TLS_EXPIRED_URL", "/hello.txt"))
        #expect(response.head.statusCode == 200)
    }

    @Test func aTrustFileThatCannotBeReadFailsEveryRequestNamingTheFile() async throws {
        let missing = FileManager.default.temporaryDirectory.appending(path: "no-such-ca-\(UUID().uuidString).pem")
        let tls = TLSConfiguration(trustRoots: .systemAnd(certificatesFile: missing))
        let error = await #expect(throws: URLError.self) { try await transport(tls).send(try TLSTestServers.trusted("/hello.txt")) }
        #expect(error?.code == .secureConnectionFailed)
        #expect(error?.localizedDescription.contains(missing.path) == true)
    }

    // MARK: Pinning

    @Test func theServersPinConnects() async throws {
        let tls = try TLSTestServers.trustingTheCA { $0.pinnedPublicKeys = [try TLSTestServers.serverPin()] }
        let response = try await transport(tls).send(try TLSTestServers.trusted("/hello.txt"))
        #expect(response.head.statusCode == 200)
    }

    @Test func anotherKeysPinFailsAsPinningNamingTheHost() async throws {
        let tls = try TLSTestServers.trustingTheCA { $0.pinnedPublicKeys = [try TLSTestServers.otherPin()] }
        let error = await #expect(throws: URLError.self) { try await transport(tls).send(try TLSTestServers.trusted("/hello.txt")) }
        #expect(error?.code == .secureConnectionFailed)
        #expect(error?.localizedDescription.hasPrefix("Public-key pinning failed for 127.0.0.1:") == true)
    }

    @Test func aRotationListWithTheServersPinConnects() async throws {
        let tls = try TLSTestServers.trustingTheCA { $0.pinnedPublicKeys = [try TLSTestServers.otherPin(), try TLSTestServers.serverPin()] }
        let response = try await transport(tls).send(try TLSTestServers.trusted("/hello.txt"))
        #expect(response.head.statusCode == 200)
    }

    @Test func aPinFailureReachesTheCallerAsSecureConnectionFailed() async throws {
        let tls = try TLSTestServers.trustingTheCA { $0.pinnedPublicKeys = [try TLSTestServers.otherPin()] }
        let error = await #expect(throws: ConveyError.self) {
            try await Probe(server: try server(tls), path: "hello.txt").send()
        }
        let failure = TransportFailure.of(error)
        #expect(failure?.kind == .secureConnectionFailed)
        #expect(failure?.reason.contains("Public-key pinning failed for 127.0.0.1") == true)
    }

    // MARK: Versions

    @Test func aTLS13MinimumRefusesATLS12OnlyServer() async throws {
        let tls = try TLSTestServers.trustingTheCA { $0.requiresTLS13 = true }
        let error = await #expect(throws: URLError.self) {
            try await transport(tls).send(try TLSTestServers.url("CONVEY_TLS12_ONLY_URL", "/hello.txt"))
        }
        #expect(error?.code == .secureConnectionFailed)
        #expect(error?.localizedDescription.hasPrefix("The TLS handshake failed for 127.0.0.1:") == true)
    }

    @Test func aTLS13MinimumGetsTLS13WhereOffered() async throws {
        let tls = try TLSTestServers.trustingTheCA { $0.requiresTLS13 = true }
        let response = try await transport(tls).send(try TLSTestServers.trusted("/hello.txt"))
        #expect(response.head.fields["X-TLS-Protocol"] == "TLSv1.3")
    }

    @Test func theDefaultMinimumStillReachesATLS12Server() async throws {
        let response = try await transport(try TLSTestServers.trustingTheCA()).send(try TLSTestServers.url("CONVEY_TLS12_ONLY_URL", "/hello.txt"))
        #expect(response.head.fields["X-TLS-Protocol"] == "TLSv1.2")
    }

    // MARK: Client certificates

    @Test func withoutAClientCertificateTheServerRefuses() async throws {
        let response = try await transport(try TLSTestServers.trustingTheCA()).send(try TLSTestServers.trusted("/client-cert/"))
        #expect(response.head.statusCode == 403)
    }

    @Test func aClientCertificateFromAnotherCAIsRejected() async throws {
        let tls = try TLSTestServers.trustingTheCA {
            $0.clientCertificate = ClientCertificate(certificateFile: try TLSTestServers.file("wrong-client.crt"),
                                                     keyFile: try TLSTestServers.file("wrong-client.key"))
        }
        let response = try await transport(tls).send(try TLSTestServers.trusted("/client-cert/"))
        #expect(response.head.statusCode == 400)
    }

    @Test func theRightClientCertificateIsAccepted() async throws {
        let tls = try TLSTestServers.trustingTheCA {
            $0.clientCertificate = ClientCertificate(certificateFile: try TLSTestServers.file("client.crt"),
                                                     keyFile: try TLSTestServers.file("client.key"))
        }
        let response = try await transport(tls).send(try TLSTestServers.trusted("/client-cert/"))
        #expect(response.head.statusCode == 200)
        #expect(body(response) == "client CN=convey-test-client\n")
    }

    @Test func anEncryptedKeyOpensWithItsPassphrase() async throws {
        let tls = try TLSTestServers.trustingTheCA {
            $0.clientCertificate = ClientCertificate(certificateFile: try TLSTestServers.file("client.crt"),
                                                     keyFile: try TLSTestServers.file("client-encrypted.key"),
                                                     passphrase: try TLSTestServers.text("client.passphrase"))
        }
        let response = try await transport(tls).send(try TLSTestServers.trusted("/client-cert/"))
        #expect(body(response) == "client CN=convey-test-client\n")
    }

    @Test func aPKCS12BundleIsAccepted() async throws {
        let tls = try TLSTestServers.trustingTheCA {
            $0.clientCertificate = ClientCertificate(pkcs12File: try TLSTestServers.file("client.p12"),
                                                     passphrase: try TLSTestServers.text("client.passphrase"))
        }
        let response = try await transport(tls).send(try TLSTestServers.trusted("/client-cert/"))
        #expect(body(response) == "client CN=convey-test-client\n")
    }

    @Test func aWrongPassphraseFailsAsTheClientCertificateWithoutPrintingIt() async throws {
        let tls = try TLSTestServers.trustingTheCA {
            $0.clientCertificate = ClientCertificate(certificateFile: try TLSTestServers.file("client.crt"),
                                                     keyFile: try TLSTestServers.file("client-encrypted.key"),
                                                     passphrase: "not-the-passphrase")
        }
        let error = await #expect(throws: URLError.self) { try await transport(tls).send(try TLSTestServers.trusted("/client-cert/")) }
        #expect(error?.localizedDescription.hasPrefix("Loading the client certificate failed for 127.0.0.1:") == true)
        #expect(error?.localizedDescription.contains("not-the-passphrase") == false)
    }

    // MARK: HTTP versions

    /// Through `localhost` (the certificate names it too), an origin no other test uses: idle
    /// connections live in the event loop's multi handle, which every curl transport shares, so
    /// another test's HTTP/1.1 connections to `127.0.0.1` would be reused here.
    @Test func manyRequestsAtOnceShareOneHTTP2ConnectionAtTheServer() async throws {
        let transport = transport(try TLSTestServers.trustingTheCA())
        let token = UUID().uuidString
        let base = try TLSTestServers.trusted("").absoluteString.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        // One exchange first: the rest then know the origin multiplexes.
        _ = try await transport.send(try #require(URL(string: base + "/mux/1k.bin?\(token)-first")))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<24 {
                let url = try #require(URL(string: base + "/mux/1k.bin?\(token)-\(index)"))
                group.addTask { try await transport.send(url).head.statusCode }
            }
            var statuses: [Int] = []
            for try await status in group { statuses.append(status) }
            return statuses
        }
        #expect(statuses == Array(repeating: 200, count: 24))
        let log = try String(contentsOf: URL(filePath: try #require(ProcessInfo.processInfo.environment["CONVEY_NGINX_MUX_LOG"])), encoding: .utf8)
        let lines = log.split(separator: "\n").filter { $0.contains(token) }.map { $0.split(separator: " ") }
        #expect(lines.count == 25)
        #expect(Set(lines.map { $0[0] }).count == 1, "nginx's $connection for each request: \(lines.map { $0[0] })")
        #expect(Set(lines.map { $0[1] }) == ["HTTP/2.0"])
    }

    @Test func aTransportPinnedToHTTP11UsesIt() async throws {
        let response = try await transport(try TLSTestServers.trustingTheCA(), httpVersion: .http1_1).send(try TLSTestServers.trusted("/hello.txt"))
        #expect(response.metrics.httpVersion == "HTTP/1.1")
        #expect(response.head.fields["X-Protocol"] == "HTTP/1.1")
    }

    /// Over an origin already reached over HTTP/2: the pinned request does not reuse that connection.
    @Test func aRequestPinnedToHTTP11UsesItAfterAnHTTP2Exchange() async throws {
        let transport = transport(try TLSTestServers.trustingTheCA())
        var request = TransportRequest(request: OutgoingRequest(url: try TLSTestServers.trusted("/hello.txt")), timeout: .seconds(20))
        #expect(try await transport.send(request).metrics.httpVersion == "HTTP/2")
        request.httpVersion = .http1_1
        #expect(try await transport.send(request).metrics.httpVersion == "HTTP/1.1")
    }

    @Test func priorKnowledgeSpeaksCleartextHTTP2() async throws {
        let transport = CurlTransport(configuration: .init(httpVersion: .http2PriorKnowledge))
        let response = try await transport.send(try TLSTestServers.url("CONVEY_NGINX_H2C_URL", "/hello.txt"))
        #expect(response.metrics.httpVersion == "HTTP/2")
        #expect(response.head.fields["X-Protocol"] == "HTTP/2.0")
    }

    @Test func aServersTLSConfigurationReachesItsBuiltInCurlTransport() async throws {
        let response = try await Probe(server: try server(try TLSTestServers.trustingTheCA(), transport: .curl), path: "client-cert/").download()
        #expect(response.statusCode == 403)
    }

    // MARK: Helpers

    private struct Probe: ServerTask {
        let server: ConveyServer
        let path: String
    }

    private func server(_ tls: TLSConfiguration, transport: BuiltInTransport = .curl) throws -> ConveyServer {
        var configuration = ServerConfiguration(reportBadHTTPStatusAsError: false, echoSink: EchoCapture().sink)
        configuration.builtInTransport = transport
        configuration.tls = tls
        let base = try TLSTestServers.trusted("")
        return ConveyServer(remote: Remote(name: "tls", url: base), configuration: configuration)
    }
}
#endif
