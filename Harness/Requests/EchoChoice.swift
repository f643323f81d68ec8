@_spi(Transport) @_spi(Tools) import Convey

/// `--echo` names for Convey's echo styles.
enum EchoChoice {
    static let styles: [(name: String, style: TaskEchoStyle)] = [
        ("none", .none), ("minimum", .consoleMinimum), ("request", .consoleRequest), ("full", .consoleFull),
        ("5k", .console5k), ("10k", .console10k), ("30k", .console30k), ("100k", .console100k), ("only-if-error", .onlyIfError),
    ]

    static var names: String { styles.map(\.name).joined(separator: ", ") }

    /// The style for `--echo a,b`, always with `.recorded` added: recording is decided by `--no-record`.
    static func style(_ text: String?, command: String) throws(UsageError) -> TaskEchoStyle {
        var style: TaskEchoStyle = .recorded
        for name in (text ?? "none").split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = name.trimmingCharacters(in: .whitespaces).lowercased()
            guard let match = styles.first(where: { $0.name == trimmed }) else {
                throw UsageError(message: "--echo: '\(trimmed)' is not one of \(names)", command: command)
            }
            style.formUnion(match.style)
        }
        return style
    }
}
