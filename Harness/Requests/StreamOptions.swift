/// `--stream` and `--events`: print a response as it arrives instead of whole.
enum StreamOptions {
    /// How a streamed response is printed.
    enum Mode: Sendable {
        /// Each line of the body as it arrives.
        case lines
        /// Each server-sent event as it arrives, reconnecting as a browser would.
        case events
    }

    static let options: [OptionSpec] = [.stream, .events]

    /// The mode asked for, or `nil` for an ordinary request.
    static func mode(_ arguments: ParsedArguments, command: String) throws(UsageError) -> Mode? {
        switch (arguments.has(.stream), arguments.has(.events)) {
        case (true, true): throw UsageError(message: "choose one of --stream and --events", command: command)
        case (true, false): return .lines
        case (false, true): return .events
        case (false, false): return nil
        }
    }
}

extension OptionSpec {
    static let stream = OptionSpec(["--stream"], curl: .harnessOnly("-N, --no-buffer"),
                                   help: "print the body line by line as it arrives (status and headers on stderr)")
    static let events = OptionSpec(["--events"], curl: .harnessOnly,
                                   help: "read the body as server-sent events (text/event-stream) and print each as it arrives")
}
