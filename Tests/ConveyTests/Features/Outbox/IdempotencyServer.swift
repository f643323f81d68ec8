import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// scripts/idempotency-server.py, which scripts/with-test-servers starts: it honours
/// `Idempotency-Key`, takes its faults from the path, and counts per key.
enum IdempotencyServer {
    static let url = ProcessInfo.processInfo.environment["CONVEY_IDEMPOTENCY_URL"].flatMap(URL.init(string:))

    static func base() throws -> String {
        try #require(url, "CONVEY_IDEMPOTENCY_URL is not set: run the suite with scripts/test").absoluteString
    }

    /// A new endpoint for one test: `/fault/MODE/N/outbox-test/UUID`, or `/outbox-test/UUID` without a fault.
    static func endpoint(fault: String? = nil) throws -> String {
        try base() + (fault.map { "/fault/\($0)" } ?? "") + "/outbox-test/\(UUID().uuidString)"
    }

    /// The counts for one key: `seen`, `processed`, `replays`, `conflicts`.
    static func stats(key: String) async throws -> [String: Int] {
        let query = key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key
        return try await json(try base() + "/stats?key=\(query)") as? [String: Int] ?? [:]
    }

    /// The keys the server received on an endpoint, in order.
    static func keys(on endpoint: String) async throws -> [String?] {
        let path = try #require(URL(string: endpoint)).path()
        let list = try await json(try base() + "/keys?path=\(path)") as? [Any] ?? []
        return list.map { $0 as? String }
    }

    /// Ends the stalls of one key.
    static func release(key: String) async throws {
        let query = key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key
        _ = try await URLSessionTransport().send(try #require(URL(string: try base() + "/release?key=\(query)")))
    }

    /// Waits until `condition` holds for the key's counts: an event the server reports, polled, never a guess at time.
    static func waitFor(key: String, _ condition: ([String: Int]) -> Bool) async throws {
        for _ in 0..<1200 {
            if condition(try await stats(key: key)) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the idempotency server never reported the expected counts for \(key)")
    }

    private static func json(_ text: String) async throws -> Any {
        let response = try await URLSessionTransport().send(try #require(URL(string: text)))
        return try JSONSerialization.jsonObject(with: response.data, options: [.fragmentsAllowed])
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only with the idempotency server up (see scripts/with-test-servers).
    static var idempotencyServer: Self {
        .enabled(if: IdempotencyServer.url != nil || ProcessInfo.processInfo.environment["CONVEY_REQUIRE_SERVERS"] != nil,
                 "needs scripts/idempotency-server.py: run scripts/test")
    }
}
