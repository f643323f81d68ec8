@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// `recorded export --har FILE [--include-secrets]`: the records in the folder as one HAR 1.2 file.
enum RecordExport {
    static let options: [OptionSpec] = [.exportHAR, .includeSecrets]

    static func run(_ arguments: ParsedArguments, _ settings: HarnessSettings) async -> ExitCode {
        let console = settings.console
        guard let path = arguments.value(.exportHAR), !path.isEmpty else {
            return console.report(UsageError(message: "recorded export needs --har FILE", command: "recorded"))
        }
        let includesSecrets = arguments.has(.includeSecrets)
        let recorder = settings.recordReader()
        do {
            let written = try await recorder.exportHAR(to: URL(filePath: path), includingSecrets: includesSecrets)
            let unreadable = await recorder.unreadableRecordIDs()
            console.out("Wrote \(written) entr\(written == 1 ? "y" : "ies") to \(DisplayFormat.terminalSafe(path)).")
            if !unreadable.isEmpty {
                console.err(console.styledError("\(unreadable.count) unreadable record\(unreadable.count == 1 ? "" : "s") skipped", .yellow))
            }
            if includesSecrets {
                console.err(console.styledError("--include-secrets: the file says it may hold credentials; records keep none the recording server masked.", .yellow))
            }
            return .ok
        } catch {
            console.fail(error.logDetail)
            return .localFailure
        }
    }

    /// The export options given without the export subcommand, as a usage error.
    static func misplaced(_ arguments: ParsedArguments) -> UsageError? {
        guard arguments.has(.exportHAR) || arguments.has(.includeSecrets) else { return nil }
        return UsageError(message: "--har and --include-secrets go with 'recorded export'", command: "recorded")
    }
}

extension OptionSpec {
    static let exportHAR = OptionSpec(["--har"], value: "FILE", curl: .harnessOnly, help: "with export: the HAR file to write (replaced when complete)")
    static let includeSecrets = OptionSpec(["--include-secrets"], curl: .harnessOnly,
                                           help: "with export: keep what the records hold unmasked, and say so in the file's comment")
}
