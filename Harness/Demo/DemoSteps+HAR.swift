@_spi(Transport) @_spi(Tools) import Convey
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A profile fetched with a token in its query, which a HAR file keeps masked.
private struct SessionProfileTask: DownloadingTask {
    typealias DownloadPayload = EchoedRequest
    let server: ConveyServer
    var page = "1"
    var path: String { "anything/profile" }
    var queryParameters: [String: String]? { ["page": page, "token": DemoSteps.harToken] }
}

/// A sign-in whose password a HAR file keeps masked.
private struct SessionSignInTask: JSONUploadingTask {
    struct Credentials: Encodable, Sendable { let user: String, password: String }
    typealias DownloadPayload = EchoedRequest
    let server: ConveyServer
    var path: String { "post" }
    var method: HTTPMethod { .post }
    var uploadPayload: Credentials? { Credentials(user: "ada", password: DemoSteps.secret) }
}

extension DemoSteps {
    /// Sent in the query of the HAR step's profile request; no HAR file may hold it.
    static let harToken = "demo-t0ken-in-query"

    static let harRoundTrip = DemoStep(
        title: "HAR: record, export, replay offline",
        explanation: "HARFixtures in capture mode writes a live run as HAR 1.2 (credentials masked); TaskRecorder.exportHAR writes"
            + " the records above the same way; replay mode answers the same tasks from the file on a server that cannot send."
    ) { context in
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-harness-har-\(UUID().uuidString)", directoryHint: .isDirectory)
        defer { try? FileManager.default.removeItem(at: folder) }
        let session = folder.appending(path: "session.har")
        do {
            let live = try await HARFixtures(file: session, mode: .capture).scope {
                (try await SessionProfileTask(server: context.server).download().payload, try await SessionSignInTask(server: context.server).download().payload)
            }
            let written = try String(contentsOf: session, encoding: .utf8)
            context.wire.write("① recorded: session.har, \(written.components(separatedBy: "\"startedDateTime\"").count - 1) entries;"
                               + " the query's token and the password appear as \(Redaction.mask)")
            if let recorder = context.recorder {
                let exported = try await recorder.exportHAR(to: folder.appending(path: "records.har"))
                context.wire.write("② exported: records.har, \(exported) entries from this demo's records, one per attempt (a retried task's attempts apart)")
            } else {
                context.wire.write("② exported: nothing, recording is off (--no-record)")
            }

            var configuration = ServerConfiguration(defaultEchoStyle: [.consoleMinimum], echoSink: context.wire.sink)
            configuration.recorder = nil
            let offline = DemoServer(target: context.target, configuration: configuration, hooks: context.hooks)
            offline.transport = StubTransport { request in
                throw URLError(.notConnectedToInternet, userInfo: [NSURLErrorFailingURLErrorKey: request.request.url])
            }
            let fixtures = try HARFixtures(file: session)
            let replayed = try await fixtures.scope {
                (try await SessionProfileTask(server: offline).download().payload, try await SessionSignInTask(server: offline).download().payload)
            }
            context.wire.write("③ replayed offline: both tasks answered from session.har by a server whose transport cannot send")
            let unmatched = await fixtures.scope { () async -> String? in
                do {
                    _ = try await SessionProfileTask(server: offline, page: "2").download()
                    return nil
                } catch {
                    guard case ConveyError.noRecordedAnswer? = error as? ConveyError else { return nil }
                    return (error as? ConveyError)?.logDetail
                }
            }
            guard !written.contains(harToken), !written.contains(secret) else {
                return .misbehaved("session.har holds the token or the password")
            }
            // The server echoed the token and the password back: the file, and so the replay, hold them masked.
            guard replayed.0.args["page"] == live.0.args["page"], replayed.0.args["token"] == Redaction.mask,
                  replayed.1.json?["user"] == live.1.json?["user"], replayed.1.json?["password"] == Redaction.mask else {
                return .misbehaved("the replay answered differently: \(replayed.0.args) against \(live.0.args)")
            }
            guard unmatched != nil else { return .misbehaved("a request the file does not hold was answered") }
            return .behaved("the replay gave the same answers with nothing sent, echoed secrets masked (the token matched its masked"
                            + " entry); a request the file lacks failed with ConveyError.noRecordedAnswer naming it")
        } catch {
            return .misbehaved(DemoText.error(error))
        }
    }
}
