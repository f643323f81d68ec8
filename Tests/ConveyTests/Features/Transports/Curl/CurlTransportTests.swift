#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// What only the curl transport offers or must guarantee, on the wire.
@Suite("CurlTransport", .wire)
struct CurlTransportTests {
    @Test func trustedPrivateCertificatesAllowHTTP2() async throws {
        let transport = CurlTransport(configuration: .init(tls: TLSConfiguration(trustRoots: .only(certificatesFile: try TestServers.nginxTLSCertificate()))))
        let response = try await transport.send(try TestServers.nginxTLS("/hello.txt"))
        #expect(response.head.statusCode == 200)
        #expect(String(decoding: response.data, as: UTF8.self) == "Hello from nginx\n")
        #expect(response.head.fields["X-Protocol"] == "HTTP/2.0")
    }

    @Test func manyRequestsShareOneHTTP2Connection() async throws {
        let transport = CurlTransport(configuration: .init(tls: TLSConfiguration(trustRoots: .only(certificatesFile: try TestServers.nginxTLSCertificate()))))
        let url = try TestServers.nginxTLS("/1k.bin")
        let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 { group.addTask { try await transport.send(url).data.count } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(sizes == Array(repeating: 1024, count: 100))
    }

    /// The server never accepts and the idle timeout is ten minutes: only the connect timeout
    /// can end the attempt within the test's limit.
    @Test(.timeLimit(.minutes(5))) func connectTimeoutIsItsOwn() async throws {
        let server = try UnacceptingServer()
        let transport = CurlTransport(configuration: .init(connectTimeout: .milliseconds(300)))
        let error = await #expect(throws: URLError.self) { _ = try await transport.send(server.url, timeout: .seconds(600)) }
        #expect(error?.code == .timedOut)
    }

    @Test func aTaskCancelledBeforeSendingNeverStarts() async throws {
        let transport = CurlTransport()
        let url = try TestServers.httpbin("/delay/2")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(url)
        }
        let result = await task.result
        #expect((result.failure as? URLError)?.code == .cancelled)
    }

    @Test func requestsBeyondTheHostLimitWaitTheirTurn() async throws {
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 2))
        let url = try TestServers.httpbin("/delay/0.3")
        let started = ContinuousClock.now
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 { group.addTask { try await transport.send(url).head.statusCode } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 6))
        // Two at a time, three rounds of at least 0.3 s each.
        #expect(started.duration(to: .now) >= .milliseconds(900))
    }

    @Test func cancellingAQueuedRequestLeavesTheOthersRunning() async throws {
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 1))
        let slow = try TestServers.httpbin("/delay/0.5")
        let running = Task { try await transport.send(slow) }
        try await Task.sleep(for: .milliseconds(100))
        let queued = Task { try await transport.send(slow) }
        try await Task.sleep(for: .milliseconds(100))
        queued.cancel()
        #expect((await queued.result.failure as? URLError)?.code == .cancelled)
        #expect(try await running.value.head.statusCode == 200)
    }

    @Test func aMissingBodyFileFailsBeforeSending() async throws {
        let missing = FileManager.default.temporaryDirectory.appending(path: "convey-missing-\(UUID().uuidString)")
        let error = await #expect(throws: URLError.self) {
            _ = try await CurlTransport().send(try TestServers.httpbin("/post"), method: "POST", bodyFile: missing)
        }
        #expect(error?.code == .fileDoesNotExist)
    }

    @Test func cookiesCanBeTurnedOff() async throws {
        let transport = CurlTransport(configuration: .init(storesCookies: false))
        _ = try await transport.send(try TestServers.httpbin("/cookies/set?kept=no"))
        let sent = try await transport.send(try TestServers.httpbin("/cookies"))
        let object = try JSONDecoder().decode([String: [String: String]].self, from: sent.data)
        #expect(object["cookies"] == [:])
    }

    @Test func optionsDoNotCarryOverToTheNextRequestOnAHandle() async throws {
        let transport = CurlTransport()
        let anything = try TestServers.httpbin("/anything")
        func echo(_ method: String, body: String? = nil, headers: [String: String] = [:]) async throws -> HTTPBinEcho {
            let headers = body == nil ? headers : headers.merging(["Content-Type": "text/plain"]) { first, _ in first }
            let response = try await transport.send(anything, method: method, headers: headers, body: body.map { Data($0.utf8) })
            return try JSONDecoder().decode(HTTPBinEcho.self, from: response.data)
        }
        let head = try await transport.send(anything, method: "HEAD")
        #expect(head.data.isEmpty)
        #expect(try await echo("POST", body: "one").data == "one")
        let get = try await echo("GET", headers: ["X-Only-Once": "yes"])
        #expect(get.method == "GET")
        #expect(get.data == "")
        #expect(try await echo("PUT", body: "two").method == "PUT")
        let plain = try await echo("GET")
        #expect(plain.method == "GET")
        #expect(plain.headers["X-Only-Once"] == nil)
        #expect(try await echo("DELETE").method == "DELETE")
        let identity = try await echo("GET", headers: ["Accept-Encoding": "identity"])
        #expect(identity.headers["Accept-Encoding"] == "identity")
        #expect(try await echo("GET").headers["Accept-Encoding"]?.contains("gzip") == true)
    }

    @Test func sequentialRequestsReuseTheirConnection() async throws {
        let transport = CurlTransport(configuration: .init(tls: TLSConfiguration(trustRoots: .only(certificatesFile: try TestServers.nginxTLSCertificate()))))
        for url in [try TestServers.nginx("/1k.bin"), try TestServers.nginxTLS("/1k.bin")] {
            var reused: [Bool?] = []
            for _ in 0..<4 { reused.append(try await transport.send(url).metrics.reusedConnection) }
            #expect(reused == [false, true, true, true], "\(url)")
        }
    }

    @Test func handlesAreReusedAcrossManySequentialRequests() async throws {
        let transport = CurlTransport()
        let urls = [try TestServers.nginx("/1k.bin"), try TestServers.httpbin("/redirect/1"), try TestServers.httpbin("/status/404")]
        for index in 0..<300 {
            let response = try await transport.send(urls[index % urls.count])
            #expect([200, 302, 404].contains(response.head.statusCode))
        }
    }
}

/// The curl transport through the whole pipeline, chosen the documented way.
@Suite("CurlTransport in the pipeline", .wire)
struct CurlPipelineTests {
    @Test @ConveyActor func builtInTransportChoosesCurl() async throws {
        let server = try httpbinServer { $0.builtInTransport = .curl }
        #expect(server.transport is CurlTransport)
        server.configuration.builtInTransport = .urlSession
        #expect(server.transport is URLSessionTransport)
    }

    struct Challenged: ServerTask {
        let server: ConveyServer
        var path: String { "basic-auth/u/p" }
    }

    struct Slow: ServerTask {
        let server: ConveyServer
        var path: String { "delay/3" }
        var configuration: TaskConfiguration? { TaskConfiguration(timeout: .milliseconds(500)) }
    }

    @Test @ConveyActor func unauthorizedAndTimeoutsMapToConveyErrors() async throws {
        let server = try httpbinServer { $0.builtInTransport = .curl }
        let unauthorized = await #expect(throws: HTTPError.self) { try await Challenged(server: server).download() }
        #expect(unauthorized?.statusCode == 401)
        let timedOut = await #expect(throws: ConveyError.self) { try await Slow(server: server).download() }
        guard let failure = timedOut?.timeout else {
            Issue.record("expected a timeout, got \(String(describing: timedOut))")
            return
        }
        #expect(failure.isTotal == false)
    }
}
#endif
