@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// The options every command accepts, and what they decide.
struct HarnessSettings: Sendable {
    /// Options valid on every command.
    static let globalOptions: [OptionSpec] = [.help, .records, .noRecord, .color, .failAllRequests]

    /// The body limit of the harness's own recordings: enough to replay typical requests.
    static let recordedBodyLimit = 64_000

    let console: Console
    /// Where records are read and written.
    let recordsFolder: URL
    /// Whether the folder was chosen (`--records` or `CONVEY_HARNESS_RECORDS`) rather than defaulted.
    let recordsFolderChosen: Bool
    /// Whether requests this run sends are recorded.
    let records: Bool

    init(_ arguments: ParsedArguments, command: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) {
        let colorText = arguments.value(.color) ?? Console.ColorChoice.auto.rawValue
        guard let color = Console.ColorChoice(rawValue: colorText) else {
            throw UsageError(message: "--color: '\(colorText)' is not one of auto, always, never", command: command)
        }
        console = Console(color: color, environment: environment)
        records = !arguments.has(.noRecord)
        if let chosen = arguments.value(.records) ?? environment["CONVEY_HARNESS_RECORDS"].flatMap({ $0.isEmpty ? nil : $0 }) {
            guard !chosen.isEmpty else { throw UsageError(message: "--records: the folder name is empty", command: command) }
            recordsFolder = URL(filePath: chosen, directoryHint: .isDirectory)
            recordsFolderChosen = true
        } else {
            let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : URL(filePath: $0, directoryHint: .isDirectory) }
                ?? URL(filePath: NSHomeDirectory(), directoryHint: .isDirectory).appending(path: ".cache")
            recordsFolder = cache.appending(path: "convey-harness/records", directoryHint: .isDirectory)
            recordsFolderChosen = false
        }
    }

    /// A recorder for the records folder, whatever `--no-record` says: for reading records.
    func recordReader() -> TaskRecorder {
        TaskRecorder(folder: recordsFolder, bodyLimit: Self.recordedBodyLimit)
    }

    /// The recorder for tasks this run sends, or `nil` with `--no-record`.
    func recorderForRequests() -> TaskRecorder? {
        records ? recordReader() : nil
    }
}

extension OptionSpec {
    static let help = OptionSpec(["-h", "--help"], curl: .same, help: "show help for the command")
    static let version = OptionSpec(["--version"], curl: .differs("top level only: convey-harness --version"), help: "print the version")
    static let records = OptionSpec(["--records"], value: "DIR", curl: .harnessOnly,
                                    help: "the task records folder (default: $CONVEY_HARNESS_RECORDS, else $XDG_CACHE_HOME/convey-harness/records)")
    static let noRecord = OptionSpec(["--no-record"], curl: .harnessOnly, help: "do not record the tasks this run sends")
    static let color = OptionSpec(["--color"], value: "WHEN", curl: .harnessOnly,
                                  help: "colour: auto (on a terminal, unless NO_COLOR is set), always or never")
    static let failAllRequests = OptionSpec(["-fail-all-requests"], curl: .harnessOnly,
                                            help: "Convey's launch argument: every task fails at once, nothing is sent")
}
