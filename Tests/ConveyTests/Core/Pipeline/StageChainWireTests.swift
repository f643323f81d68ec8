import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The chain of stages on the wire, over the servers' built-in transport (curl, or URLSession with
/// `CONVEY_TRANSPORT=urlSession`): httpbin's `/cache/60` (fresh for a minute) and the event
/// server's `/events`, straight or through httpbin's `/redirect-to` (302).
@Suite("Stage chain on the wire", .wire)
@ConveyActor
struct StageChainWireTests {
    /// Where a case goes: the server's remote, the task's path and query, and the final URL.
    private struct Route {
        let remote: Remote
        let path: String
        let query: [String: String]?
        let finalURL: URL

        var firstPath: String { "/" + path }
        /// The final URL as echo shows it: the event server's `key` masked, as a query item of that name is.
        var echoedFinalURL: String {
            guard let query = finalURL.query() else { return finalURL.absoluteString }
            let masked = query.split(separator: "&").map { $0.hasPrefix("key=") ? "key=‹redacted›" : String($0) }
            return finalURL.absoluteString.prefix { $0 != "?" } + "?" + masked.joined(separator: "&")
        }
    }

    private func route(_ chainCase: ChainCase, key: String) throws -> Route {
        let httpbin = try TestServers.httpbin()
        let final: URL
        let finalRemote: Remote
        let finalPath: String
        var finalQuery: [String: String]?
        if chainCase.delivery == .events {
            finalRemote = try TestServers.events()
            finalPath = "events"
            finalQuery = ["count": "2", "size": "16", "key": key]
            // Sorted by name, as Convey sends query parameters.
            final = try TestServers.eventsURLWith("/events?count=2&key=\(key)&size=16")
        } else {
            finalRemote = httpbin
            finalPath = "cache/60"
            final = try TestServers.httpbin("/cache/60")
        }
        guard chainCase.redirected else { return Route(remote: finalRemote, path: finalPath, query: finalQuery, finalURL: final) }
        // Same origin for httpbin (a relative Location), the event server's for events.
        let location = chainCase.delivery == .events ? final.absoluteString : "/cache/60"
        return Route(remote: httpbin, path: "redirect-to", query: ["url": location, "status_code": "302"], finalURL: final)
    }

    /// Whether `transport` refuses `stream()` and `events()`: URLSession on Linux does.
    private func refusesStreams(_ transport: any ConveyTransport) -> Bool {
        #if canImport(FoundationNetworking)
        transport is URLSessionTransport
        #else
        false
        #endif
    }

    @Test("The chain delivers, follows, echoes, caches and calls the hooks on the wire", arguments: ChainCase.all)
    func chainOnTheWire(_ chainCase: ChainCase) async throws {
        try await withTemporaryFolder { folder in
            let route = try route(chainCase, key: "chain-\(UUID().uuidString)")
            let log = EventLog()
            let echo = EchoCapture()
            let recorder = TaskRecorder(folder: folder.appending(path: "records"))
            let server = ChainServer(remote: route.remote, log: log, cache: chainCase.cached ? DataCache() : nil, echo: echo, recorder: recorder)
            let task = ChainTask(server: server, path: route.path, log: log, queryParameters: route.query)
            let finalPath = route.finalURL.path
            // The suite runs once per built-in transport (`CONVEY_TRANSPORT`).
            #expect((server.transport is URLSessionTransport) == (BuiltInTransport.platformDefault == .urlSession))

            if chainCase.delivery.streams, refusesStreams(server.transport) {
                // URLSession on Linux cannot stream: the run fails at its first hop, as a failure.
                let error = await #expect(throws: ConveyError.self) { try await ChainDelivery.run(chainCase.delivery, task, folder: folder) }
                guard case .transport(let failure, _, let code, _)? = error else { Issue.record("not a refused stream: \(String(describing: error))"); return }
                #expect(URLSessionTransport.isRefusedStream(failure, code: code))
                let events = log.events
                #expect(events.count == 3)
                #expect(events.first == "willSendRequest \(route.firstPath)")
                #expect(events.dropFirst().first?.hasPrefix("didFail ") == true)
                #expect(events.last == "server.didFinish none error")
                return
            }

            let first = try await ChainDelivery.run(chainCase.delivery, task, folder: folder)
            try expectFinalBody(first, chainCase, finalURL: route.finalURL)
            #expect(log.events == chainCase.expectedHooks(firstPath: route.firstPath, finalPath: finalPath, cacheStatus: .network))
            let hops = chainCase.redirected ? ["302 /redirect-to", "200 \(finalPath)"] : ["200 \(finalPath)"]
            let records = await recorder.records().map { "\($0.statusCode ?? 0) \($0.url.flatMap(URL.init(string:))?.path ?? "?")" }
            #expect(records.sorted() == hops.sorted())
            // Each hop is echoed as a line of its own (the event server's `key` is masked, as query keys are).
            let echoed = echo.text
            #expect(echoed.contains("/redirect-to?") == chainCase.redirected)
            #expect(echoed.contains("→ 302") == chainCase.redirected)
            #expect(echoed.contains("GET \(route.echoedFinalURL) → 200"))

            // The same GET again: a body kept in memory comes from the cache, fresh; the redirect
            // (which httpbin does not make cacheable) still goes to the server.
            let second = try await ChainDelivery.run(chainCase.delivery, task, folder: folder)
            try expectFinalBody(second, chainCase, finalURL: route.finalURL)
            let status: CacheStatus = chainCase.usesCache ? .hit : .network
            #expect(log.events == chainCase.expectedHooks(firstPath: route.firstPath, finalPath: finalPath, cacheStatus: .network)
                + chainCase.expectedHooks(firstPath: route.firstPath, finalPath: finalPath, cacheStatus: status))
        }
    }

    /// What the caller got is the final response's body, from the final hop's request.
    private func expectFinalBody(_ delivered: ChainDelivery, _ chainCase: ChainCase, finalURL: URL) throws {
        #expect(delivered.requestURL == finalURL)
        switch chainCase.delivery {
        case .events:
            #expect(delivered.events.map(\.id) == ["1", "2"])
            #expect(delivered.events.allSatisfy { $0.url == finalURL })
            #expect(try delivered.events.map { try $0.decoded(as: NumberedEvent.self).n } == [1, 2])
        case .memory, .file, .stream:
            let echoed = try JSONDecoder().decode(HTTPBinEcho.self, from: delivered.body)
            #expect(echoed.url == finalURL.absoluteString)
            #expect(delivered.responseURL == finalURL)
            #expect(delivered.statusCode == 200)
        }
    }

    /// An event of the event server's `/events`: its number.
    private struct NumberedEvent: Decodable {
        let n: Int
    }
}

extension TestServers {
    /// A URL on the event server, from a path with its query.
    static func eventsURLWith(_ pathAndQuery: String) throws -> URL {
        let base = try #require(eventsURL, "CONVEY_EVENTS_URL is not set: run the suite with scripts/test")
        return try #require(URL(string: base.absoluteString + pathAndQuery))
    }
}
