/// One command of the harness: its help and what it runs.
struct Command: Sendable {
    let name: String
    /// The usage line after `convey-harness`, such as `get PATH [options]`.
    let synopsis: String
    /// One line for the command list.
    let summary: String
    /// Paragraphs after the usage line.
    let details: String
    /// The command's own options; the global ones are added to every command.
    let options: [OptionSpec]
    let run: @Sendable (ParsedArguments, HarnessSettings) async -> ExitCode

    /// Every option the command accepts.
    var allOptions: [OptionSpec] { options + HarnessSettings.globalOptions }

    /// The text `--help` prints.
    var help: String {
        var text = "Usage: convey-harness \(synopsis)\n\n\(summary)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        if !options.isEmpty { text += "\nOptions:\n" + Self.table(options) }
        text += "\nGlobal options:\n" + Self.table(HarnessSettings.globalOptions)
        return text + "\n" + ExitCode.table
    }

    /// Options as an aligned two-column list.
    static func table(_ options: [OptionSpec]) -> String {
        let width = min(34, (options.map(\.synopsis.count).max() ?? 0) + 2)
        return options.map { option in
            let synopsis = option.synopsis
            let padding = synopsis.count < width ? String(repeating: " ", count: width - synopsis.count) : "\n  " + String(repeating: " ", count: width)
            return "  " + synopsis + padding + option.help
        }.joined(separator: "\n") + "\n"
    }
}
