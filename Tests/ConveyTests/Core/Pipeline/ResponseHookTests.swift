import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// `didReceiveResponse` gets the head as received on every run: fields in order with repeats,
/// read as an `HTTPURLResponse` would be, and Foundation's form only when the hook asks for it.
@Suite("Response hook")
@ConveyActor
struct ResponseHookTests {
    private struct Watching: DownloadingTask {
        let server: ConveyServer
        let log: EventLog
        var path: String { "watching" }
        var echoStyle: TaskEchoStyle { .none }
        func didReceiveResponse(response: ResponseHead, data: Data) async throws {
            log.add("\(response.statusCode) \(response.value(forHTTPHeaderField: "x-seen") ?? "-") \(response.fields.values(named: "Set-Thing"))")
        }
    }

    private struct AskingFoundation: DownloadingTask {
        let server: ConveyServer
        let log: EventLog
        var path: String { "asking" }
        var echoStyle: TaskEchoStyle { .none }
        func didReceiveResponse(response: ResponseHead, data: Data) async throws {
            let foundation = response.httpURLResponse
            log.add("\(foundation.statusCode) \(foundation.value(forHTTPHeaderField: "X-Seen") ?? "-") \(foundation.url?.path ?? "-")")
        }
    }

    /// A head with a repeated field, as a server may send it.
    private nonisolated static let headers: Headers = {
        var fields = Headers()
        for (name, value) in [("X-Seen", "yes"), ("Set-Thing", "a"), ("Set-Thing", "b")] {
            fields.appendLine(Header(name: name, value: value))
        }
        return fields
    }()

    @Test func aTaskWithItsOwnHookGetsTheHeadAsReceivedOnEveryRun() async throws {
        let log = EventLog()
        let server = try stubServer(StubTransport { request in
            TransportResponse(url: request.request.url, statusCode: 203, headers: Self.headers)
        })
        for _ in 0..<3 { try await Watching(server: server, log: log).send() }
        #expect(log.events == Array(repeating: "203 yes [\"a\", \"b\"]", count: 3))
    }

    @Test func foundationsResponseIsBuiltWhenTheHookAsksForIt() async throws {
        let log = EventLog()
        let server = try stubServer(StubTransport { request in
            TransportResponse(url: request.request.url, statusCode: 200, headers: Self.headers)
        })
        try await AskingFoundation(server: server, log: log).send()
        #expect(log.events == ["200 yes /asking"])
    }
}
