@_spi(Tools) import Convey
import Foundation

/// `recorded list|show N|clear`: the task records in the records folder.
enum RecordedCommand {
    static let command = Command(
        name: "recorded",
        synopsis: "recorded list|show N|export --har FILE|clear [options]",
        summary: "Lists, shows, exports or clears recorded tasks: every attempt of a task with the .recorded echo style.",
        details: """
            list         one line per record, newest first, numbered from 1
            show N|ID    every detail of record N (or the record with that ID)
            export       write every record as HAR 1.2 to --har FILE, oldest first, credentials
                         masked (--include-secrets keeps what the records hold; they never hold
                         what the recording server masked)
            clear        remove every record in the folder

            The harness records its own requests; point --records at an app's TaskRecorder folder
            to read the app's records. Unreadable records are skipped and counted.
            """,
        options: [.outputJSON] + RecordExport.options,
        run: run)

    private static func run(_ arguments: ParsedArguments, _ settings: HarnessSettings) async -> ExitCode {
        let console = settings.console
        let recorder = settings.recordReader()
        let positionals = arguments.positionals
        let folder = recorder.folder.path(percentEncoded: false)
        if positionals.first == "export", positionals.count == 1 { return await RecordExport.run(arguments, settings) }
        if let misplaced = RecordExport.misplaced(arguments) { return console.report(misplaced) }
        switch positionals.first {
        case "list" where positionals.count == 1:
            let records = await recorder.records()
            let unreadable = await recorder.unreadableRecordIDs()
            if arguments.has(.outputJSON) {
                console.out(DisplayFormat.terminalSafeJSON((try? RecordedTask.jsonText(records)) ?? "null"))
            } else if records.isEmpty {
                console.out("No records in \(folder).")
            } else {
                RecordPrinter(console: console).list(records)
                console.err(console.styledError("\(records.count) record\(records.count == 1 ? "" : "s") in \(folder), newest first", .dim))
            }
            if !unreadable.isEmpty {
                console.err(console.styledError("\(unreadable.count) unreadable record\(unreadable.count == 1 ? "" : "s") skipped: "
                                                + unreadable.joined(separator: ", "), .yellow))
            }
            return .ok
        case "show" where positionals.count == 2:
            do {
                let (number, record) = try await RecordLookup.find(positionals[1], in: recorder)
                if arguments.has(.outputJSON) {
                    console.out(DisplayFormat.terminalSafeJSON((try? RecordedTask.jsonText(record)) ?? "null"))
                } else {
                    RecordPrinter(console: console).show(record, number: number)
                }
                return .ok
            } catch {
                console.fail(error.message)
                return .localFailure
            }
        case "clear" where positionals.count == 1:
            let removed = await recorder.clear()
            console.out("Removed \(removed) record\(removed == 1 ? "" : "s") from \(folder).")
            return .ok
        case "show":
            return console.report(UsageError(message: "recorded show needs one record number or ID", command: "recorded"))
        case .some(let other) where !["list", "clear", "export"].contains(other):
            return console.report(UsageError(message: "unknown subcommand '\(other)': use list, show N, export or clear", command: "recorded"))
        case .some:
            return console.report(UsageError(message: "unexpected argument '\(positionals[1])'", command: "recorded"))
        case .none:
            return console.report(UsageError(message: "recorded needs a subcommand: list, show N, export or clear", command: "recorded"))
        }
    }
}
