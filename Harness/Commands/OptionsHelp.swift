/// `convey-harness help options`: every option of every command beside curl's, as a Markdown
/// table that Docs/harness.md holds word for word (a test compares them), then the curl options
/// the harness does not have.
enum OptionsHelp {
    static func text(commands: [Command]) -> String {
        // Request options first: they are the ones curl has.
        let ordered = commands.filter { !$0.options.isEmpty && $0.name != "demo" && $0.name != "recorded" }
            + commands.filter { $0.name == "recorded" || $0.name == "demo" }
        var seen: Set<String> = []
        var options: [OptionSpec] = []
        for option in ordered.flatMap(\.options) + HarnessSettings.globalOptions + [.version] where seen.insert(option.key).inserted {
            options.append(option)
        }
        var lines = [
            "| option | curl | meaning here |",
            "|---|---|---|",
        ]
        for option in options {
            lines.append("| `\(cell(option.synopsis))` | \(cell(counterpart(option.curl))) | \(cell(option.help)) |")
        }
        lines += [
            "",
            "| curl's option | instead |",
            "|---|---|",
        ]
        for entry in CurlOnlyOptions.entries {
            lines.append("| `\(cell(entry.names.joined(separator: ", ")))` | \(cell(entry.instead)) |")
        }
        return lines.joined(separator: "\n")
    }

    private static func counterpart(_ curl: CurlCounterpart) -> String {
        switch curl {
        case .same: "same"
        case .differs(let how): "differs: " + how
        case .harnessOnly(let closest): "harness only" + (closest.map { " (curl: \($0))" } ?? "")
        }
    }

    /// Text for a Markdown table cell: a `|` would end the cell.
    private static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|")
    }
}
