import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Probe: ServerTask {
    let server: ConveyServer
    var path = "anything"
    var configuration: TaskConfiguration?
}

@Suite("Server configuration")
@ConveyActor
struct ServerConfigurationTests {
    /// The run clock and retry waiter are class-bound existentials (two words each): one of a
    /// protocol that is not (five words, stored out of line) would make the configuration
    /// address-only, and every read of one of its settings would copy all of it.
    @Test func theClockAndWaiterFieldsAreClassBoundExistentials() {
        #expect(MemoryLayout<any RunClock>.size == 2 * MemoryLayout<UnsafeRawPointer>.size)
        #expect(MemoryLayout<any RetryWaiting>.size == 2 * MemoryLayout<UnsafeRawPointer>.size)
    }

    @Test func defaultTimeoutAppliesWhenTheTaskHasNone() async throws {
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen)) { $0.defaultTimeout = .seconds(12) }
        try await Probe(server: server).send()
        #expect(seen.last?.timeout == .seconds(12))
    }

    @Test(arguments: [(Duration.seconds(3), Duration.seconds(3)), (.zero, .milliseconds(1)), (.seconds(-5), .milliseconds(1))])
    func taskTimeoutOverridesAndIsClamped(timeout: Duration, expected: Duration) async throws {
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen))
        try await Probe(server: server, configuration: .init(timeout: timeout)).send()
        #expect(seen.last?.timeout == expected)
    }

    @Test func networkAccessPoliciesReachTheTransport() async throws {
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen)) { $0.allowsExpensiveNetworkAccess = false }
        try await Probe(server: server).send()
        #expect(seen.last?.allowsExpensiveNetworkAccess == false)
        #expect(seen.last?.allowsConstrainedNetworkAccess == true)
        try await Probe(server: server, configuration: .init(allowsExpensiveNetworkAccess: true, allowsConstrainedNetworkAccess: false)).send()
        #expect(seen.last?.allowsExpensiveNetworkAccess == true)
        #expect(seen.last?.allowsConstrainedNetworkAccess == false)
    }

    @Test func gzipOffAsksForIdentityEncoding() async throws {
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen)) { $0.enableGZipDownloads = false }
        try await Probe(server: server).send()
        #expect(seen.last?.request.value(forHTTPHeaderField: "Accept-Encoding") == "identity")
        server.configuration.enableGZipDownloads = true
        try await Probe(server: server).send()
        #expect(seen.last?.request.value(forHTTPHeaderField: "Accept-Encoding") == nil)
    }

    @Test func customDecoderIsUsedForTypedPayloads() async throws {
        struct Snake: DownloadingTask {
            struct Payload: Decodable, Sendable { let firstName: String }
            typealias DownloadPayload = Payload
            let server: ConveyServer
            var path: String { "snake" }
        }
        let server = try stubServer(.answering(body: #"{"first_name": "Ada"}"#)) {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            $0.defaultDecoder = decoder
        }
        #expect(try await Snake(server: server).download().payload.firstName == "Ada")
    }

    @Test func defaultCodersUseISO8601DatesWithAndWithoutFractions() throws {
        struct Stamp: Codable, Equatable { let at: Date }
        let decoder = JSONCoding.makeDecoder()
        let whole = try decoder.decode(Stamp.self, from: Data(#"{"at": "2026-01-31T12:00:00Z"}"#.utf8))
        let fractional = try decoder.decode(Stamp.self, from: Data(#"{"at": "2026-01-31T12:00:00.250Z"}"#.utf8))
        #expect(fractional.at.timeIntervalSince(whole.at) == 0.25)
        let encoded = try JSONCoding.makeEncoder().encode(fractional)
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"at":"2026-01-31T12:00:00.250Z"}"#)
        #expect(throws: DecodingError.self) { try decoder.decode(Stamp.self, from: Data(#"{"at": "yesterday"}"#.utf8)) }
    }

    @Test func remoteCanBeSwitchedBetweenRuns() async throws {
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen))
        try await Probe(server: server).send()
        let staging = try #require(Remote(name: "staging", string: "https://staging.example", pathPrefix: "v2"))
        server.remote = staging
        try await Probe(server: server).send()
        #expect(seen.requests.map { $0.request.url.absoluteString } == ["https://stub.example/anything", "https://staging.example/v2/anything"])
    }
}
