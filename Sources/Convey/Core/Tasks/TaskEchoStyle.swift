/// What Convey prints or records about a task run.
///
/// Console styles print to the server's `echoSink` (standard output by default). Combine them:
/// `[.consoleFull, .onlyIfError]` prints everything, but only for runs that failed.
public struct TaskEchoStyle: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// One line per attempt: method, URL, status, time and sizes.
    public static let consoleMinimum = TaskEchoStyle(rawValue: 1 << 0)
    /// The request as sent: request line, headers (credentials redacted) and body.
    public static let consoleRequest = TaskEchoStyle(rawValue: 1 << 1)
    /// The request and the response with headers and bodies, bodies cut at 1 MB.
    public static let consoleFull = TaskEchoStyle(rawValue: 1 << 2)
    /// Like `consoleFull`, bodies cut at 5,000 characters.
    public static let console5k = TaskEchoStyle(rawValue: 1 << 3)
    /// Like `consoleFull`, bodies cut at 10,000 characters.
    public static let console10k = TaskEchoStyle(rawValue: 1 << 4)
    /// Like `consoleFull`, bodies cut at 30,000 characters.
    public static let console30k = TaskEchoStyle(rawValue: 1 << 5)
    /// Like `consoleFull`, bodies cut at 100,000 characters.
    public static let console100k = TaskEchoStyle(rawValue: 1 << 6)
    /// Persist a record of the run for later review (see task recording).
    public static let recorded = TaskEchoStyle(rawValue: 1 << 7)
    /// Echo to the console only when the run failed.
    public static let onlyIfError = TaskEchoStyle(rawValue: 1 << 8)

    /// No echo and no recording.
    public static let none: TaskEchoStyle = []

    /// Whether any console style is set.
    public var printsToConsole: Bool {
        !intersection([.consoleMinimum, .consoleRequest, .consoleFull, .console5k, .console10k, .console30k, .console100k]).isEmpty
    }

    /// Whether response headers and bodies are printed.
    var printsResponseDetail: Bool {
        !intersection([.consoleFull, .console5k, .console10k, .console30k, .console100k]).isEmpty
    }

    /// Whether request headers and bodies are printed.
    var printsRequestDetail: Bool { contains(.consoleRequest) || printsResponseDetail }

    /// The longest body printed, in characters: the smallest limit chosen wins.
    var bodyLimit: Int {
        if contains(.console5k) { return 5_000 }
        if contains(.console10k) { return 10_000 }
        if contains(.console30k) { return 30_000 }
        if contains(.console100k) { return 100_000 }
        return 1_000_000
    }
}

/// There is no `EchoStyle`: a task's and a server's echo style is a `TaskEchoStyle`.
@available(*, unavailable, renamed: "TaskEchoStyle", message: "the echo style's type is TaskEchoStyle")
public typealias EchoStyle = TaskEchoStyle
