#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey
import CCurl

/// A curl handle keeps the options its last request set and changes only what the next request
/// changes (`CurlEasyHandle.configure`). Each request must still go out with its own method,
/// body, fields, credentials, timeouts and HTTP version, never the previous one's, and the
/// transport's TLS and proxy settings never reach another transport's requests. One request at a
/// time on a fresh transport runs on one handle, which each test checks it did.
@Suite("A curl handle between requests", .wire)
struct CurlHandleReuseTests {
    /// What httpbin's `/anything` echoed for a request through `transport`.
    private func echo(_ transport: CurlTransport, _ method: String, path: String = "/anything", body: String? = nil,
                      headers: [String: String] = [:]) async throws -> HTTPBinEcho {
        let response = try await transport.send(try TestServers.httpbin(path), method: method, headers: headers,
                                                body: body.map { Data($0.utf8) })
        #expect(response.head.statusCode == 200, "\(method) \(path)")
        return try JSONDecoder().decode(HTTPBinEcho.self, from: response.data)
    }

    @Test func methodAndBodyAreEachRequestsOwn() async throws {
        let transport = CurlTransport()
        let text = ["Content-Type": "text/plain"]
        let first = try await echo(transport, "POST", body: "one", headers: text)
        #expect(first.method == "POST" && first.data == "one")
        let longer = try await echo(transport, "POST", body: "a longer second body", headers: text)
        #expect(longer.data == "a longer second body")
        #expect(longer.headers["Content-Length"] == "20")
        let put = try await echo(transport, "PUT", body: "three", headers: text)
        #expect(put.method == "PUT" && put.data == "three")
        let patch = try await echo(transport, "PATCH")
        #expect(patch.method == "PATCH" && patch.data == "")
        let delete = try await echo(transport, "DELETE", body: "gone", headers: text)
        #expect(delete.method == "DELETE" && delete.data == "gone")
        let get = try await echo(transport, "GET")
        #expect(get.method == "GET" && get.data == "")
        #expect(get.headers["Content-Length"] == nil && get.headers["Content-Type"] == nil)
        let head = try await transport.send(try TestServers.httpbin("/anything"), method: "HEAD")
        #expect(head.head.statusCode == 200 && head.data.isEmpty)
        let afterHead = try await transport.send(try TestServers.httpbin("/anything"))
        #expect(try JSONDecoder().decode(HTTPBinEcho.self, from: afterHead.data).method == "GET", "a GET after a HEAD has its body")
        let again = try await echo(transport, "POST", body: "one", headers: text)
        #expect(again.method == "POST" && again.data == "one")
        #expect(transport.handlesMade == 1)
    }

    @Test func fieldsAndCredentialsAreEachRequestsOwn() async throws {
        let transport = CurlTransport()
        let first = try await echo(transport, "GET", headers: ["Authorization": "Bearer first-token", "X-Trace": "1"])
        #expect(first.headers["Authorization"] == "Bearer first-token" && first.headers["X-Trace"] == "1")
        let second = try await echo(transport, "GET", headers: ["Authorization": "Bearer second-token"])
        #expect(second.headers["Authorization"] == "Bearer second-token")
        #expect(second.headers["X-Trace"] == nil)
        let none = try await echo(transport, "GET")
        #expect(none.headers["Authorization"] == nil)
        let cookie = try await echo(transport, "GET", headers: ["Cookie": "session=secret"])
        #expect(cookie.headers["Cookie"] == "session=secret")
        #expect(try await echo(transport, "GET").headers["Cookie"] == nil)

        // Credentials in the URL go with that URL only.
        let base = try TestServers.httpbin("/basic-auth/user/passwd")
        var withUser = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
        withUser.user = "user"
        withUser.password = "passwd"
        let signedIn = try await transport.send(try #require(withUser.url))
        #expect(signedIn.head.statusCode == 200)
        let anonymous = try await transport.send(base)
        #expect(anonymous.head.statusCode == 401)
        #expect(transport.handlesMade == 1)
    }

    @Test func theHTTPVersionIsEachRequestsOwn() async throws {
        let transport = CurlTransport(configuration: .init(tls: TLSConfiguration(trustRoots: .only(certificatesFile: try TestServers.nginxTLSCertificate()))))
        let url = try TestServers.nginxTLS("/hello.txt")
        for version in [HTTPVersionPreference.http1_1, nil, .http1_1, nil, .http1_1] {
            var outgoing = OutgoingRequest(url: url)
            // An HTTP/1.1 connection is not kept, so that the next request's own version decides a new one.
            if version == .http1_1 { outgoing.setValue("close", forHTTPHeaderField: "Connection") }
            var request = TransportRequest(request: outgoing, timeout: .seconds(20))
            request.httpVersion = version
            let response = try await transport.send(request)
            let expected = version == .http1_1 ? "HTTP/1.1" : "HTTP/2.0"
            #expect(response.head.fields["X-Protocol"] == expected, "asked for \(String(describing: version))")
        }
        #expect(transport.handlesMade == 1)
    }

    @Test func idleTimeoutsAreEachRequestsOwn() async throws {
        let transport = CurlTransport()
        let slow = try TestServers.httpbin("/delay/1")
        for timeout in [Duration.milliseconds(300), .seconds(20), .milliseconds(300)] {
            let result = await Result { try await transport.send(slow, timeout: timeout) }
            if timeout < .seconds(1) {
                #expect((result.failure as? URLError)?.code == .timedOut, "a \(timeout) timeout")
            } else {
                #expect((try? result.get())?.head.statusCode == 200, "a \(timeout) timeout")
            }
        }
        #expect(transport.handlesMade == 1)
    }

    @Test func tlsAndProxySettingsStayWithTheirTransport() async throws {
        let trusting = CurlTransport(configuration: .init(tls: try TLSTestServers.trustingTheCA()))
        let systemTrust = CurlTransport()
        let user = "user-\(UUID().uuidString)"
        let proxied = CurlTransport(configuration: .init(proxy: .through(try TLSTestServers.proxy("CONVEY_HTTP_PROXY_URL", user: user))))
        let direct = CurlTransport(configuration: .init(proxy: .direct))
        let secure = try TLSTestServers.trusted("/hello.txt")
        let plain = try TestServers.nginx("/hello.txt")
        for _ in 0..<3 {
            #expect(try await trusting.send(secure).head.statusCode == 200)
            let refused = await #expect(throws: URLError.self) { try await systemTrust.send(secure) }
            #expect(refused?.code == .serverCertificateUntrusted)
            #expect(try await proxied.send(plain).head.statusCode == 200)
            #expect(try await direct.send(plain).head.statusCode == 200)
        }
        #expect(try await TLSTestServers.proxyCounts(user: user)["forwards"] == 3)
        #expect([trusting, systemTrust, proxied, direct].map(\.handlesMade) == [1, 1, 1, 1])
    }

    @Test func anOptionSetForOneRequestNeverLeaksToTheNext() async throws {
        let transport = CurlTransport()
        // Asked not to decode: the gzip bytes as they came; then decoded again.
        let raw = try await transport.send(try TestServers.httpbin("/gzip"), headers: ["Accept-Encoding": "identity"])
        #expect(Array(raw.data.prefix(2)) == [0x1F, 0x8B])
        let decoded = try await transport.send(try TestServers.httpbin("/gzip"))
        #expect(String(decoding: decoded.data, as: UTF8.self).contains("\"gzipped\": true"))
        // A custom method, then the plain one curl sends by itself.
        #expect(try await echo(transport, "DELETE").method == "DELETE")
        #expect(try await echo(transport, "GET").method == "GET")
        // A body labelled by the request, then one curl must not label form-encoded.
        let labelled = try await echo(transport, "PUT", body: "{}", headers: ["Content-Type": "application/json"])
        #expect(labelled.headers["Content-Type"] == "application/json")
        let unlabelled = try await echo(transport, "PUT", body: "x")
        #expect(unlabelled.headers["Content-Type"] == nil)
        #expect(unlabelled.headers["Expect"] == nil)
        // A large body read in large pieces, then a small one as usual.
        var large = TransportRequest(request: OutgoingRequest(url: try TestServers.nginx("/16m.bin")), timeout: .seconds(30))
        large.expectsLargeBody = true
        #expect(try await transport.send(large).data.count == 16 << 20)
        #expect(try await transport.send(try TestServers.nginx("/1k.bin")).data.count == 1024)
        #expect(transport.handlesMade == 1)
    }

    /// What the handle tells curl: after each request, exactly that request's settings, whatever
    /// came before (the options above that a wire test cannot tell apart, the connect timeout among them).
    /// The lines of a curl header list, in order.
    private static func lines(of list: UnsafeMutablePointer<curl_slist>?) -> [String] {
        var lines: [String] = []
        var node = list
        while let current = node {
            if let data = current.pointee.data { lines.append(String(cString: data)) }
            node = current.pointee.next
        }
        return lines
    }

    @Test func theHandleHoldsExactlyTheLastRequestsSettings() throws {
        let pool = CurlHandlePool(configuration: .init(), loops: [CurlEventLoop.shared], maximumIdleHandles: 1)
        let easy = try #require(pool.takeHandle())
        let url = URL(string: "http://127.0.0.1:9/a")!
        func configure(_ method: String, body: Int64? = nil, connectTimeout: Duration, fields: Headers = Headers()) {
            var request = OutgoingRequest(method: HTTPMethod(rawValue: method), url: url)
            request.fields = fields
            _ = easy.configure(for: request, address: url.absoluteString, bodySize: body, connectTimeout: connectTimeout, expectsLargeBody: false)
        }
        configure("POST", body: 3, connectTimeout: .seconds(600), fields: ["Authorization": "Bearer a"])
        #expect(easy.settings.shape == .post(size: 3))
        #expect(easy.settings.connectTimeoutMilliseconds == 600_000)
        #expect(Self.lines(of: easy.settings.headerList).contains("Authorization: Bearer a"))
        configure("GET", connectTimeout: .milliseconds(300))
        #expect(easy.settings.shape == .get)
        #expect(easy.settings.customMethod == nil)
        #expect(easy.settings.connectTimeoutMilliseconds == 300)
        // The lines themselves: a new list may well be allocated where the old one was.
        #expect(!Self.lines(of: easy.settings.headerList).contains { $0.hasPrefix("Authorization") })
        configure("PURGE", body: 7, connectTimeout: .milliseconds(300))
        #expect(easy.settings.shape == .post(size: 7))
        #expect(easy.settings.customMethod == "PURGE")
        configure("HEAD", connectTimeout: .seconds(1))
        #expect(easy.settings.shape == .head)
        #expect(easy.settings.customMethod == nil)
        #expect(easy.settings.connectTimeoutMilliseconds == 1_000)
        #expect(easy.settings.address == url.absoluteString)
        pool.recycle(easy)
    }
}

private extension Result where Failure == any Error {
    /// The result of an async throwing call.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
#endif
