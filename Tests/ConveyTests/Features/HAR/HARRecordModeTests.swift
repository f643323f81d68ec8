import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct Item: ServerTask {
    let server: ConveyServer
    let id: Int
    var path: String { "items/\(id)" }
}

private struct Retried: ServerTask {
    let server: ConveyServer
    var path: String { "retried" }
    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { count < 2 ? 0 : nil }
}

/// A stub network answering `/items/N` with `item N #k` (k counting its calls) and `/retried` with 503, then 200.
private func countingNetwork(_ seen: RequestLog) -> StubTransport {
    StubTransport { request in
        seen.add(request)
        let url = request.request.url
        let calls = seen.requests.filter { $0.request.url == url }.count
        if url.path == "/retried" {
            return TransportResponse(url: url, statusCode: calls == 1 ? 503 : 200, body: Data("retried #\(calls)".utf8))
        }
        return TransportResponse(url: url, statusCode: 200, headers: ["Content-Type": "text/plain"],
                                 body: Data("\(url.lastPathComponent) #\(calls)".utf8))
    }
}

@Suite("HAR record mode")
@ConveyActor
struct HARRecordModeTests {
    @Test func recordOnceThenReplayOfflineWithTheSameResults() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("fixtures/items.har")
        let seen = RequestLog()
        let server = try stubServer(countingNetwork(seen))

        let recording = try HARFixtures(file: file, mode: .record)
        let recorded = try await recording.scope {
            [try await Item(server: server, id: 1).download(), try await Retried(server: server).download(), try await Item(server: server, id: 1).download()]
        }
        let replaying = try HARFixtures(file: file)
        let offline = try offlineServer(base: "https://stub.example")
        let replayed = try await replaying.scope {
            [try await Item(server: offline, id: 1).download(), try await Retried(server: offline).download(), try await Item(server: offline, id: 1).download()]
        }

        #expect(seen.requests.count == 4)
        #expect(recorded.map { String(decoding: $0.data, as: UTF8.self) } == ["1 #1", "retried #2", "1 #2"])
        #expect(replayed.map { String(decoding: $0.data, as: UTF8.self) } == ["1 #1", "retried #2", "1 #2"])
        #expect(replayed.map(\.attemptNumber) == [1, 2, 1])
        #expect(replaying.unansweredEntries.isEmpty)
        let entries = try HARText.entries(of: file)
        #expect(entries.compactMap { ($0["_convey"] as? [String: Any])?["attempt"] as? Int } == [1, 1, 2, 1])
        #expect(entries.compactMap { ($0["_convey"] as? [String: Any])?["taskType"] as? String } == ["Item", "Retried", "Retried", "Item"])
    }

    @Test func aSecondRecordingRunSendsOnlyWhatTheFileLacks() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("items.har")
        let seen = RequestLog()
        let server = try stubServer(countingNetwork(seen))

        try await HARFixtures(file: file, mode: .record).scope { _ = try await Item(server: server, id: 1).download() }
        let second = try await HARFixtures(file: file, mode: .record).scope {
            [try await Item(server: server, id: 1).download(), try await Item(server: server, id: 2).download()]
        }

        #expect(seen.requests.map(\.request.url.path) == ["/items/1", "/items/2"])
        #expect(second.map { String(decoding: $0.data, as: UTF8.self) } == ["1 #1", "2 #1"])
        #expect(try HARText.entries(of: file).count == 2)
    }

    @Test func parallelRecordingsIntoOneFileLoseNoEntry() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("items.har")
        let seen = RequestLog()
        let server = try stubServer(countingNetwork(seen))
        let fixtures = try HARFixtures(file: file, mode: .capture)

        let runs = (1...20).map { id in
            Task { @ConveyActor in try await fixtures.scope { _ = try await Item(server: server, id: id).download() } }
        }
        for run in runs { try await run.value }

        let urls = try HARText.entries(of: file).compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
        #expect(Set(urls) == Set((1...20).map { "https://stub.example/items/\($0)" }))
        #expect(urls.count == 20)
    }

    @Test func appendingToAnotherToolsFileKeepsItsBytesAndAddsTheSecretsNoticeToItsComment() async throws {
        let scratch = try HARScratch()
        defer { scratch.remove() }
        let file = scratch.file("mitmproxy.har")
        let original = try Data(contentsOf: HARValidator.fixturesFolder.appending(path: "mitmproxy-httpbin.har"))
        var withComment = String(decoding: original, as: UTF8.self)
        withComment = withComment.replacingOccurrences(of: "\"version\": \"1.2\",", with: "\"version\": \"1.2\",\n        \"comment\": \"captured by hand\",")
        try Data(withComment.utf8).write(to: file)
        let server = try stubServer(countingNetwork(RequestLog()))

        try await HARFixtures(file: file, mode: .capture, includingSecrets: true).scope { _ = try await Item(server: server, id: 9).download() }
        try await HARFixtures(file: file, mode: .capture, includingSecrets: true).scope { _ = try await Item(server: server, id: 10).download() }

        let text = try String(contentsOf: file, encoding: .utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let log = try #require(object["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 11)
        #expect(log["comment"] as? String == "captured by hand " + HARPrivacy.secretsKeptComment)
        let kept = withComment[try #require(withComment.range(of: "\"creator\"")).lowerBound..<(try #require(withComment.range(of: "\"status\": 503")).lowerBound)]
        #expect(text.contains(kept))
        #expect((log["creator"] as? [String: Any])?["name"] as? String == "mitmproxy")
    }
}
