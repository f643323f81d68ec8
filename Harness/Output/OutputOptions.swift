import Foundation

/// How a manual run's result is shown.
struct OutputOptions: Sendable {
    static let options: [OptionSpec] = [
        OptionSpec(["--json"], help: "print the result as one JSON object (machine-readable)"),
        OptionSpec(["-v", "--verbose"], help: "print the request as sent before the response"),
        OptionSpec(["-b", "--body-only"], help: "print only the response body, byte for byte"),
        OptionSpec(["-o", "--output"], value: "FILE", help: "write the response body to FILE"),
        OptionSpec(["--progress"], help: "always show the progress bar (default: on a terminal, for transfers over 0.5 s)"),
        OptionSpec(["--no-progress"], help: "never show the progress bar"),
    ]

    let json: Bool
    let verbose: Bool
    let bodyOnly: Bool
    let outputFile: URL?
    let forcesProgress: Bool
    let hidesProgress: Bool

    init(_ arguments: ParsedArguments, command: String) throws(UsageError) {
        json = arguments.has("json")
        verbose = arguments.has("verbose")
        bodyOnly = arguments.has("body-only")
        forcesProgress = arguments.has("progress")
        hidesProgress = arguments.has("no-progress")
        if json && bodyOnly { throw UsageError(message: "--json and --body-only cannot be combined", command: command) }
        if forcesProgress && hidesProgress { throw UsageError(message: "--progress and --no-progress cannot be combined", command: command) }
        outputFile = try arguments.value("output").map { path throws(UsageError) in
            guard !path.isEmpty else { throw UsageError(message: "--output: the file name is empty", command: command) }
            return URL(filePath: path)
        }
    }

    /// The progress bar for this run, or `nil` when none may be drawn.
    func progressBar(console: Console) -> ProgressBar? {
        guard !hidesProgress else { return nil }
        let bar = ProgressBar(console: console, forced: forcesProgress)
        return bar.isEnabled ? bar : nil
    }
}
