import Foundation

/// How a manual run's result is shown, and what counts as its failure.
struct OutputOptions: Sendable {
    static let options: [OptionSpec] = [
        .fail, .failWithBody, .silent, .showError, .verbose, .output, .continueAt, .writeOut,
        .bodyOnly, .outputJSON, .timings, .progress, .noProgress,
    ]

    /// Where `-C` resumes.
    enum Resume: Sendable, Equatable {
        /// `-C -`: where the file `-o` names ends (or a broken transfer's partial file).
        case atFileEnd
        /// `-C OFFSET`.
        case at(Int64)
    }

    /// What `-f` and `--fail-with-body` make of a status of 400 or more.
    enum FailMode: Sendable {
        /// `-f`: exit 22 and show no body.
        case withoutBody
        /// `--fail-with-body`: exit 22 and show the body.
        case withBody
    }

    let json: Bool
    let verbose: Bool
    let bodyOnly: Bool
    let outputFile: URL?
    let resume: Resume?
    let writeOut: WriteOut?
    let printsTimings: Bool
    let forcesProgress: Bool
    let hidesProgress: Bool
    /// `-s`: no progress bar, summary line, warnings or (without `-S`) error messages.
    let silent: Bool
    /// Whether errors are said: not with `-s` alone.
    let showsErrors: Bool
    let fail: FailMode?

    init(_ arguments: ParsedArguments, command: String) throws(UsageError) {
        json = arguments.has(.outputJSON)
        verbose = arguments.has(.verbose)
        // `-o -` is standard output, as in curl: the body alone.
        bodyOnly = arguments.has(.bodyOnly) || arguments.value(.output) == "-"
        forcesProgress = arguments.has(.progress)
        hidesProgress = arguments.has(.noProgress)
        printsTimings = arguments.has(.timings)
        silent = arguments.has(.silent)
        showsErrors = !silent || arguments.has(.showError)
        if json && bodyOnly { throw UsageError(message: "--output-json and --body-only cannot be combined", command: command) }
        if forcesProgress && hidesProgress { throw UsageError(message: "--progress and --no-progress cannot be combined", command: command) }
        switch (arguments.has(.fail), arguments.has(.failWithBody)) {
        case (true, true): throw UsageError(message: "choose -f or --fail-with-body, not both", command: command)
        case (true, false): fail = .withoutBody
        case (false, true): fail = .withBody
        case (false, false): fail = nil
        }
        outputFile = try arguments.value(.output).flatMap { path throws(UsageError) in
            guard !path.isEmpty else { throw UsageError(message: "-o: the file name is empty", command: command) }
            return path == "-" ? nil : URL(filePath: path)
        }
        resume = try arguments.value(.continueAt).map { text throws(UsageError) in
            if text == "-" { return .atFileEnd }
            guard let offset = Int64(text), offset >= 0 else {
                throw UsageError(message: "-C: '\(text)' is not '-' or a byte offset", command: command)
            }
            return .at(offset)
        }
        writeOut = try arguments.value(.writeOut).map { text throws(UsageError) in try WriteOut(text, command: command) }
    }

    /// The progress bar for this run, or `nil` when none may be drawn.
    func progressBar(console: Console) -> ProgressBar? {
        guard !hidesProgress, !silent || forcesProgress else { return nil }
        let bar = ProgressBar(console: console, forced: forcesProgress)
        return bar.isEnabled ? bar : nil
    }
}

extension OptionSpec {
    static let fail = OptionSpec(["-f", "--fail"], curl: .same,
                                 help: "a status of 400 or more: exit 22 and print no body (with -o, write no file)")
    static let failWithBody = OptionSpec(["--fail-with-body"], curl: .same, help: "a status of 400 or more: exit 22, the body still shown")
    static let silent = OptionSpec(["-s", "--silent"], curl: .differs("also hides the harness's summary line and warnings"),
                                   help: "no progress bar, summary line, warnings or error messages")
    static let showError = OptionSpec(["-S", "--show-error"], curl: .same, help: "with -s: still say what went wrong")
    static let verbose = OptionSpec(["-v", "--verbose"], curl: .differs("'*' lines name the transport and the connection only; credentials masked; the response head also shows as usual"),
                                    help: "print each exchange on stderr: the request head as sent ('> '), every field the transport added included, then the response head ('< ')")
    static let output = OptionSpec(["-o", "--output"], value: "FILE",
                                   curl: .differs("the file appears only when complete, owner-only; a broken transfer leaves FILE.convey-partial"),
                                   help: "write the body to FILE as it arrives (status line and headers go to stderr); - is stdout")
    static let continueAt = OptionSpec(["-C", "--continue-at"], value: "OFFSET|-",
                                       curl: .differs("-C - also resumes FILE.convey-partial, checked with If-Range; appending to FILE holds the rest in memory (100 MiB at most)"),
                                       help: "ask for the body from OFFSET (-: where -o FILE ends) and append it to FILE")
    static let writeOut = OptionSpec(["-w", "--write-out"], value: "FORMAT|@FILE",
                                     curl: .differs("knows " + WriteOutValues.names.joined(separator: ", ") + ", json, stdout, stderr and %header{NAME}"),
                                     help: "after the run, print FORMAT with %{variable}s filled in (\\n, \\t as curl)")
    static let bodyOnly = OptionSpec(["--body-only"], curl: .harnessOnly("its default output"),
                                     help: "print only the response body, byte for byte, as curl does")
    static let outputJSON = OptionSpec(["--output-json"], curl: .harnessOnly("-w '%{json}'"), help: "print the result as one JSON object (machine-readable)")
    static let timings = OptionSpec(["--timings"], curl: .harnessOnly("-w with its time_ variables"),
                                    help: "print the exchange's timings: dns, connect, tls, first byte, total, bytes, version, reuse")
    static let progress = OptionSpec(["--progress"], curl: .harnessOnly("-#"),
                                     help: "always show the progress bar (default: on a terminal, for transfers over 0.5 s)")
    static let noProgress = OptionSpec(["--no-progress"], curl: .harnessOnly("--no-progress-meter"), help: "never show the progress bar")
}
