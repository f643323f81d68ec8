import Foundation

/// How a manual run's result is shown.
struct OutputOptions: Sendable {
    static let options: [OptionSpec] = [
        OptionSpec(["--json"], help: "print the result as one JSON object (machine-readable)"),
        OptionSpec(["-v", "--verbose"], help: "print the request as sent before the response"),
        OptionSpec(["-b", "--body-only"], help: "print only the response body, byte for byte"),
        OptionSpec(["-o", "--output"], value: "FILE", help: "stream the response body to FILE (put in place when complete)"),
        OptionSpec(["-C", "--continue"], help: "with --output: resume a partial FILE left by a broken transfer (Range + If-Range)"),
        OptionSpec(["-w", "--timings"], help: "print the exchange's timings: dns, connect, tls, first byte, total, bytes, version, reuse"),
        OptionSpec(["--progress"], help: "always show the progress bar (default: on a terminal, for transfers over 0.5 s)"),
        OptionSpec(["--no-progress"], help: "never show the progress bar"),
    ]

    let json: Bool
    let verbose: Bool
    let bodyOnly: Bool
    let outputFile: URL?
    let continuesPartialFile: Bool
    let printsTimings: Bool
    let forcesProgress: Bool
    let hidesProgress: Bool

    init(_ arguments: ParsedArguments, command: String) throws(UsageError) {
        json = arguments.has("json")
        verbose = arguments.has("verbose")
        bodyOnly = arguments.has("body-only")
        forcesProgress = arguments.has("progress")
        hidesProgress = arguments.has("no-progress")
        continuesPartialFile = arguments.has("continue")
        printsTimings = arguments.has("timings")
        if json && bodyOnly { throw UsageError(message: "--json and --body-only cannot be combined", command: command) }
        if forcesProgress && hidesProgress { throw UsageError(message: "--progress and --no-progress cannot be combined", command: command) }
        outputFile = try arguments.value("output").map { path throws(UsageError) in
            guard !path.isEmpty else { throw UsageError(message: "--output: the file name is empty", command: command) }
            return URL(filePath: path)
        }
        if continuesPartialFile && outputFile == nil { throw UsageError(message: "--continue needs --output FILE", command: command) }
    }

    /// The progress bar for this run, or `nil` when none may be drawn.
    func progressBar(console: Console) -> ProgressBar? {
        guard !hidesProgress else { return nil }
        let bar = ProgressBar(console: console, forced: forcesProgress)
        return bar.isEnabled ? bar : nil
    }
}
