import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// `ConveyError.noRemote` says which of its two cases it is, each with its own fix: no default
/// server was ever made, or the server has no remote.
@Suite("A run with nowhere to go")
@ConveyActor
struct NoRemoteErrorTests {
    private struct Fetch: ServerTask {
        let server: ConveyServer
        var path: String { "items/1" }
    }

    private func failure(on server: ConveyServer) async throws -> ConveyError {
        do {
            try await Fetch(server: server).send()
        } catch let error as ConveyError {
            return error
        }
        Issue.record("the task ran")
        throw CancellationError()
    }

    /// A message for a person: one sentence, with nothing of the code in it.
    private func isASentence(_ message: String?) -> Bool {
        guard let message, let first = message.first else { return false }
        return first.isUppercase && message.hasSuffix(".") && !message.contains("`") && !message.contains("init")
    }

    #if os(Linux) || os(macOS)
    @Test func aTaskBeforeAnyDefaultServerSaysSoAndNamesTheFix() async throws {
        // A process of its own: in this one, other suites have made default servers.
        let output = try await FreshProcess.output("no-default-server")
        let logDetail = try #require(output.split(separator: "\n").first { $0.hasPrefix("logDetail: ") }?.dropFirst("logDetail: ".count))
        let displayMessage = try #require(output.split(separator: "\n").first { $0.hasPrefix("displayMessage: ") }?
            .dropFirst("displayMessage: ".count))
        #expect(logDetail.hasPrefix("No default server: "))
        #expect(logDetail.contains("init(asDefault: true)"))
        #expect(logDetail.contains("_ = AppServer.shared"))
        #expect(!logDetail.contains("has no remote"))
        #expect(isASentence(String(displayMessage)), "\(displayMessage)")
    }
    #endif

    @Test func theDefaultsStandInFailsWithTheMissingDefaultCase() async throws {
        let error = try await failure(on: ConveyServer.standInForMissingDefault())
        #expect(error == .noRemote(server: ConveyServer.missingDefaultName))
        #expect(error.logDetail.hasPrefix("No default server: "))
        #expect(error.logDetail.contains("super.init(asDefault: true)"))
        #expect(isASentence(error.displayMessage))
    }

    @Test func aServerWithoutARemoteSaysToSetIt() async throws {
        let error = try await failure(on: ConveyServer(remote: nil))
        #expect(error == .noRemote(server: "ConveyServer"))
        #expect(error.logDetail == "ConveyServer has no remote: set its `remote` (in its initializer, or `server.remote = …`) before running tasks")
        #expect(!error.logDetail.contains("asDefault"))
        #expect(isASentence(error.displayMessage))
        #expect(error.displayMessage != ConveyError.noRemote(server: ConveyServer.missingDefaultName).displayMessage)
    }

    @Test func theStandInIsAServerLikeAnyOtherOnceItHasARemote() {
        let standIn = ConveyServer.standInForMissingDefault()
        standIn.remote = Remote(name: "api", string: "https://api.example.com")
        #expect(standIn.name == "ConveyServer (api)")
    }
}
