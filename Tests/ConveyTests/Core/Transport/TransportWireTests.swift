import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// What every real transport must do on the wire, run once per transport against the local
/// httpbin and nginx.
@Suite("Transports on the wire", .wire)
struct TransportWireTests {
    private func echo(_ response: TransportResponse) throws -> HTTPBinEcho {
        try JSONDecoder().decode(HTTPBinEcho.self, from: response.data)
    }

    @Test(arguments: TransportKind.allCases)
    func getSendsTheQueryString(_ kind: TransportKind) async throws {
        let response = try await kind.make().send(try TestServers.httpbin("/get?a=1&b=two%20words&c=%C3%A9"))
        #expect(response.head.statusCode == 200)
        #expect(try echo(response).args == ["a": "1", "b": "two words", "c": "é"])
    }

    @Test(arguments: TransportKind.allCases)
    func postSendsTheBody(_ kind: TransportKind) async throws {
        let body = Data(#"{"name":"Ada","tags":["x","y"]}"#.utf8)
        let response = try await kind.make().send(try TestServers.httpbin("/post"), method: "POST",
                                                  headers: ["Content-Type": "application/json"], body: body)
        #expect(response.head.statusCode == 200)
        #expect(try echo(response).json == .object(["name": .string("Ada"), "tags": .array([.string("x"), .string("y")])]))
    }

    @Test(arguments: TransportKind.allCases)
    func otherMethodsKeepTheirNameAndBody(_ kind: TransportKind) async throws {
        let transport = kind.make()
        for method in ["PUT", "PATCH", "DELETE"] {
            let response = try await transport.send(try TestServers.httpbin("/anything"), method: method,
                                                    headers: ["Content-Type": "text/plain"], body: Data("payload \(method)".utf8))
            let echoed = try echo(response)
            #expect(echoed.method == method)
            #expect(echoed.data == "payload \(method)")
        }
        let deleted = try echo(try await transport.send(try TestServers.httpbin("/anything"), method: "DELETE"))
        #expect(deleted.method == "DELETE")
        #expect(deleted.data == "")
    }

    @Test(arguments: TransportKind.allCases)
    func headRequestsReturnHeadersOnly(_ kind: TransportKind) async throws {
        let response = try await kind.make().send(try TestServers.nginx("/hello.txt"), method: "HEAD")
        #expect(response.head.statusCode == 200)
        #expect(response.data.isEmpty)
        #expect(response.head.fields["Content-Length"] == "17")
    }

    @Test(arguments: TransportKind.allCases)
    func requestHeadersArriveAsSent(_ kind: TransportKind) async throws {
        let response = try await kind.make().send(try TestServers.httpbin("/headers"), headers: [
            "X-Convey-Test": "value with spaces", "User-Agent": "ConveyTests/1.0", "Authorization": "Bearer abc",
        ])
        let headers = try echo(response).headers
        #expect(headers["X-Convey-Test"] == "value with spaces")
        #expect(headers["User-Agent"] == "ConveyTests/1.0")
        #expect(headers["Authorization"] == "Bearer abc")
        #expect(headers["Expect"] == nil)
    }

    @Test(arguments: TransportKind.allCases)
    func repeatedResponseHeadersAreJoined(_ kind: TransportKind) async throws {
        let response = try await kind.make().send(try TestServers.httpbin("/response-headers?X-Dup=a&X-Dup=b&X-Single=1"))
        #expect(response.head.fields["X-Dup"] == "a, b")
        #expect(response.head.fields["x-single"] == "1")
        #expect(response.head.fields["Content-Type"] == "application/json")
    }

    @Test(arguments: TransportKind.allCases)
    func repeatedFieldsAreKeptApartWhereTheTransportSeesThem(_ kind: TransportKind) async throws {
        let cookie = "a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT"
        let query = "Set-Cookie=\(cookie.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")&Set-Cookie=b%3D2&Age=7200&Age=0"
        let response = try await kind.make().send(try TestServers.httpbin("/response-headers?\(query)"))
        switch kind {
        case .urlSession:
            // FoundationNetworking joins repeated fields before Convey sees them.
            #expect(response.head.fields.values(named: "Age") == ["7200, 0"])
        #if os(Linux) && canImport(CConveyCurlShim)
        case .curl:
            #expect(response.head.fields.values(named: "Set-Cookie") == [cookie, "b=2"])
            #expect(response.head.fields.values(named: "Age") == ["7200", "0"])
            #expect(response.head.fields["age"] == "7200, 0")
        #endif
        }
    }

    @Test(arguments: TransportKind.allCases)
    func compressedResponsesAreDecoded(_ kind: TransportKind) async throws {
        let transport = kind.make()
        for (path, flag) in [("/gzip", "gzipped"), ("/deflate", "deflated")] {
            let response = try await transport.send(try TestServers.httpbin(path))
            let object = try JSONDecoder().decode([String: JSONValue].self, from: response.data)
            #expect(object[flag] == .bool(true), "\(path)")
        }
        // httpbin sends brotli unasked. Curl asks for gzip and deflate only and hands any other
        // coding through as it came; URLSession asks for br too and decodes it.
        let brotli = try await transport.send(try TestServers.httpbin("/brotli"))
        #expect(brotli.head.fields["Content-Encoding"] == "br")
        let decoded = try? JSONDecoder().decode([String: JSONValue].self, from: brotli.data)
        #expect((decoded?["brotli"] == .bool(true)) == (kind == .urlSession))
        let zipped = try await transport.send(try TestServers.nginx("/gz/10k.json"))
        #expect(zipped.head.fields["Content-Encoding"] == "gzip")
        #expect(try JSONSerialization.jsonObject(with: zipped.data) is [Any])
    }

    @Test(arguments: TransportKind.allCases)
    func identityEncodingIsSentAndLeftAlone(_ kind: TransportKind) async throws {
        let response = try await kind.make().send(try TestServers.httpbin("/headers"), headers: ["Accept-Encoding": "identity"])
        #expect(try echo(response).headers["Accept-Encoding"] == "identity")
        let plain = try await kind.make().send(try TestServers.nginx("/gz/10k.json"), headers: ["Accept-Encoding": "identity"])
        #expect(plain.head.fields["Content-Encoding"] == nil)
        #expect(try JSONSerialization.jsonObject(with: plain.data) is [Any])
    }

    @Test(arguments: TransportKind.allCases)
    func errorStatusesComeBackAsResponses(_ kind: TransportKind) async throws {
        let transport = kind.make()
        for status in [404, 500] {
            let response = try await transport.send(try TestServers.httpbin("/status/\(status)"))
            #expect(response.head.statusCode == status)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func basicChallengeReturnsThe401AtOnce(_ kind: TransportKind) async throws {
        let transport = kind.make()
        // URLSession on Linux hangs on this challenge; the timeout would end it with an error, not the 401.
        let challenged = try await transport.send(try TestServers.httpbin("/basic-auth/u/p"), timeout: .seconds(30))
        #expect(challenged.head.statusCode == 401)
        let credential = Data("u:p".utf8).base64EncodedString()
        let accepted = try await transport.send(try TestServers.httpbin("/basic-auth/u/p"), headers: ["Authorization": "Basic \(credential)"])
        #expect(accepted.head.statusCode == 200)
    }

    @Test(arguments: TransportKind.allCases)
    func idleTimeoutFires(_ kind: TransportKind) async throws {
        let error = await #expect(throws: URLError.self, "the server answers after 10 s: without the timeout, a 200") {
            _ = try await kind.make().send(try TestServers.httpbin("/delay/10"), timeout: .milliseconds(500))
        }
        #expect(error?.code == .timedOut)
    }

    #if canImport(Glibc)
    /// The server never accepts: without the timeout the attempt would hang past the test's limit.
    @Test(.timeLimit(.minutes(5)), arguments: TransportKind.allCases)
    func connectingCountsAgainstTheTimeout(_ kind: TransportKind) async throws {
        let server = try UnacceptingServer()
        let error = await #expect(throws: URLError.self) {
            _ = try await kind.make().send(server.url, timeout: .milliseconds(500))
        }
        #expect(error?.code == .timedOut)
    }
    #endif

    @Test(arguments: TransportKind.allCases)
    func cancellationEndsTheTransferPromptly(_ kind: TransportKind) async throws {
        let transport = kind.make()
        let url = try TestServers.httpbin("/drip?duration=30&numbytes=30&delay=0")
        let task = Task { try await transport.send(url) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        let result = await task.result
        #expect(throws: URLError.self, "the drip lasts 30 s and would end with a 200") { try result.get() }
        #expect((result.failure as? URLError)?.code == .cancelled)
    }

    @Test(arguments: TransportKind.allCases)
    func uploadsStreamFromAFileWithProgress(_ kind: TransportKind) async throws {
        let text = String(repeating: "Convey streams this line from disk.\n", count: 8_000)
        let file = FileManager.default.temporaryDirectory.appending(path: "convey-upload-\(UUID().uuidString).txt")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let log = TransferProgressLog()
        let response = try await kind.make().send(try TestServers.httpbin("/anything"), method: "POST",
                                                  headers: ["Content-Type": "text/plain"], bodyFile: file,
                                                  progress: { log.add($0) })
        #expect(try echo(response).data == text)
        let last = try #require(log.reports.last)
        #expect(last.bytesSent == Int64(text.utf8.count))
        #expect(last.totalBytesToSend == Int64(text.utf8.count))
    }

    @Test(arguments: TransportKind.allCases)
    func downloadsReportProgress(_ kind: TransportKind) async throws {
        let log = TransferProgressLog()
        let response = try await kind.make().send(try TestServers.nginx("/256k.json"), progress: { log.add($0) })
        let reports = log.reports
        let last = try #require(reports.last)
        #expect(last.bytesReceived == Int64(response.data.count))
        #expect(last.totalBytesToReceive == Int64(response.data.count))
        #expect(reports.map(\.bytesReceived) == reports.map(\.bytesReceived).sorted())
        #expect(response.data.count > 200_000)
    }

    @Test(arguments: TransportKind.allCases)
    func manyConcurrentRequestsAllComplete(_ kind: TransportKind) async throws {
        let transport = kind.make()
        let url = try TestServers.nginx("/1k.bin")
        let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 { group.addTask { try await transport.send(url).data.count } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(sizes.count == 200)
        #expect(sizes.allSatisfy { $0 == 1024 })
    }

    @Test(arguments: TransportKind.allCases)
    func refusedConnectionsFailAsCannotConnect(_ kind: TransportKind) async throws {
        let url = try #require(URL(string: "http://127.0.0.1:1/nothing"))
        let error = await #expect(throws: URLError.self) { _ = try await kind.make().send(url) }
        #expect(error?.code == .cannotConnectToHost)
    }
}

extension TransportWireTests {
    @Test(arguments: TransportKind.allCases)
    func cookiesSetByTheServerGoBack(_ kind: TransportKind) async throws {
        let transport = kind.make()
        let name = "c\(UInt32.random(in: 0...UInt32.max))"
        _ = try await transport.send(try TestServers.httpbin("/cookies/set?\(name)=yes"))
        let sent = try await transport.send(try TestServers.httpbin("/cookies"))
        let object = try JSONDecoder().decode([String: [String: String]].self, from: sent.data)
        #expect(object["cookies"]?[name] == "yes")
    }

    /// FoundationNetworking's own storage is process-wide and saved under the home folder; each
    /// transport keeps its cookies to itself, in memory.
    @Test(arguments: TransportKind.allCases)
    func cookiesStayWithTheTransportThatReceivedThem(_ kind: TransportKind) async throws {
        let name = "c\(UInt32.random(in: 0...UInt32.max))"
        let receiver = kind.make()
        _ = try await receiver.send(try TestServers.httpbin("/cookies/set?\(name)=secret"))
        let other = try await kind.make().send(try TestServers.httpbin("/cookies"))
        let cookies = try JSONDecoder().decode([String: [String: String]].self, from: other.data)["cookies"]
        #expect(cookies?[name] == nil)
        let saved = FileManager.default.homeDirectoryForCurrentUser.appending(path: ".local/share")
        let files = FileManager.default.enumerator(at: saved, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []
        for file in files where file.lastPathComponent.hasPrefix(".cookies") {
            let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            #expect(!text.contains(name), "\(file.path) holds the cookie")
        }
    }
}

extension TransportWireTests {
    @Test(arguments: TransportKind.allCases)
    func untrustedCertificatesAreRejected(_ kind: TransportKind) async throws {
        let error = await #expect(throws: URLError.self) {
            _ = try await kind.make().send(try TestServers.nginxTLS("/hello.txt"))
        }
        // URLSession on Linux reports every TLS failure as .unknown; URLSessionTransport reads
        // libcurl's message and reports what curl reports (see LibcurlMessages).
        #expect(error?.code == .serverCertificateUntrusted)
    }
}
