import Convey
import Foundation

/// `--fixtures FILE.har` and `--record-har FILE` on every request command: answer from a HAR file
/// and send nothing, and append each exchange (each redirect, each retry) to a HAR file.
struct HAROptions: Sendable {
    static let options: [OptionSpec] = [
        OptionSpec(["--fixtures"], value: "FILE.har", help: "answer from this HAR file and send nothing; a request it does not answer fails (exit 5)"),
        OptionSpec(["--record-har"], value: "FILE", help: "append each exchange (every redirect and retry) to this HAR file, credentials masked"),
    ]

    /// `--fixtures`: the file requests are answered from.
    var fixtures: URL?
    /// `--record-har`: the file exchanges are appended to.
    var recording: URL?

    init() {}

    init(_ arguments: ParsedArguments, command: String) throws(UsageError) {
        fixtures = try Self.file(arguments.value("fixtures"), option: "--fixtures", command: command)
        recording = try Self.file(arguments.value("record-har"), option: "--record-har", command: command)
        if let fixtures, let recording, fixtures.standardizedFileURL == recording.standardizedFileURL {
            throw UsageError(message: "--fixtures and --record-har name the same file: record into another one", command: command)
        }
    }

    /// Runs `operation` with the files in scope: `--fixtures` answering, `--record-har` keeping
    /// what came back (from the fixtures, when both are given). Throws `HARError` when a file
    /// cannot be read.
    @ConveyActor
    func scope<Result: Sendable>(_ operation: @ConveyActor () async -> Result) async throws(HARError) -> Result {
        let replay = try fixtures.map { file throws(HARError) in try HARFixtures(file: file) }
        let capture = try recording.map { file throws(HARError) in try HARFixtures(file: file, mode: .capture) }
        switch (replay, capture) {
        case (nil, nil): return await operation()
        case (let replay?, nil): return await replay.scope { await operation() }
        case (nil, let capture?): return await capture.scope { await operation() }
        case (let replay?, let capture?): return await replay.scope { await capture.scope { await operation() } }
        }
    }

    private static func file(_ text: String?, option: String, command: String) throws(UsageError) -> URL? {
        guard let text else { return nil }
        guard !text.isEmpty else { throw UsageError(message: "\(option): the file name is empty", command: command) }
        return URL(filePath: text)
    }
}
