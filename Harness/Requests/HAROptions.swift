@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// `--fixtures FILE.har` and `--record-har FILE` on every request command: answer from a HAR file
/// and send nothing, and append each exchange (each redirect, each retry) to a HAR file.
struct HAROptions: Sendable {
    static let options: [OptionSpec] = [.fixtures, .recordHAR]

    /// `--fixtures`: the file requests are answered from.
    var fixtures: URL?
    /// `--record-har`: the file exchanges are appended to.
    var recording: URL?

    init() {}

    init(_ arguments: ParsedArguments, command: String) throws(UsageError) {
        fixtures = try Self.file(arguments.value(.fixtures), option: "--fixtures", command: command)
        recording = try Self.file(arguments.value(.recordHAR), option: "--record-har", command: command)
        if let fixtures, let recording, fixtures.standardizedFileURL == recording.standardizedFileURL {
            throw UsageError(message: "--fixtures and --record-har name the same file: record into another one", command: command)
        }
    }

    /// Runs `operation` with the files in scope: `--fixtures` answering, `--record-har` keeping
    /// what came back (from the fixtures, when both are given). Throws `ConveyError.harFileUnusable` when a file
    /// cannot be read, and whatever `operation` throws.
    @ConveyActor
    func scope<Result: Sendable>(_ operation: @ConveyActor () async throws -> Result) async throws -> Result {
        let replay = try fixtures.map { file throws(ConveyError) in try HARFixtures(file: file) }
        let capture = try recording.map { file throws(ConveyError) in try HARFixtures(file: file, mode: .capture) }
        switch (replay, capture) {
        case (nil, nil): return try await operation()
        case (let replay?, nil): return try await replay.scope { try await operation() }
        case (nil, let capture?): return try await capture.scope { try await operation() }
        case (let replay?, let capture?): return try await replay.scope { try await capture.scope { try await operation() } }
        }
    }

    private static func file(_ text: String?, option: String, command: String) throws(UsageError) -> URL? {
        guard let text else { return nil }
        guard !text.isEmpty else { throw UsageError(message: "\(option): the file name is empty", command: command) }
        return URL(filePath: text)
    }
}

extension OptionSpec {
    static let fixtures = OptionSpec(["--fixtures"], value: "FILE.har", curl: .harnessOnly,
                                     help: "answer from this HAR file and send nothing; a request it does not answer fails (exit 5)")
    static let recordHAR = OptionSpec(["--record-har"], value: "FILE", curl: .harnessOnly,
                                      help: "append each exchange (every redirect and retry) to this HAR file, credentials masked")
}
