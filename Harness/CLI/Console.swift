@_spi(Tools) import Convey
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the harness writes, and whether each stream gets colour.
///
/// Text from outside (bodies, headers, events, error messages, records) is escaped with
/// `DisplayFormat.terminalSafe` before it is written: through `styled`, or by the caller for
/// unstyled parts, so that a server's escape sequences never reach the terminal.
///
/// Colour is used only on a terminal, and never when `NO_COLOR` is set to anything non-empty
/// (https://no-color.org) or `TERM` is `dumb`; `--color always|never` overrides both.
struct Console: Sendable {
    /// When to colour output.
    enum ColorChoice: String, Sendable {
        case auto, always, never
    }

    let colorsOutput: Bool
    let colorsErrors: Bool
    /// Whether standard error is a terminal: progress bars redraw in place only there.
    let errorIsTerminal: Bool
    /// Whether standard output is a terminal: `--body-only` writes bytes as they are only elsewhere.
    let outputIsTerminal: Bool

    init(color: ColorChoice, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let allowed = (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
        errorIsTerminal = isatty(STDERR_FILENO) != 0
        outputIsTerminal = isatty(STDOUT_FILENO) != 0
        switch color {
        case .always: (colorsOutput, colorsErrors) = (true, true)
        case .never: (colorsOutput, colorsErrors) = (false, false)
        case .auto: (colorsOutput, colorsErrors) = (allowed && outputIsTerminal, allowed && errorIsTerminal)
        }
    }

    /// Writes a line to standard output.
    func out(_ text: String = "") {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes a line to standard error.
    func err(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Text styled for standard output, or plain when it gets no colour; control characters in
    /// `text` are escaped, so that only the style's own sequences reach the terminal.
    func styled(_ text: String, _ style: TextStyle) -> String {
        colorsOutput ? style.apply(to: DisplayFormat.terminalSafe(text)) : DisplayFormat.terminalSafe(text)
    }

    /// Text styled for standard error, or plain when it gets no colour; control characters
    /// escaped as `styled(_:_:)` escapes them.
    func styledError(_ text: String, _ style: TextStyle) -> String {
        colorsErrors ? style.apply(to: DisplayFormat.terminalSafe(text)) : DisplayFormat.terminalSafe(text)
    }

    /// Reports a usage error the way common tools do, and returns the usage exit code.
    func report(_ error: UsageError) -> ExitCode {
        err(styledError("convey-harness: ", .bold) + error.message)
        let help = error.command.map { "convey-harness \($0) --help" } ?? "convey-harness --help"
        err("Run '\(help)' for usage.")
        return .usage
    }

    /// Reports a failure on standard error.
    func fail(_ message: String) {
        err(styledError("convey-harness: ", .bold) + styledError(message, .red))
    }
}

/// ANSI text styles.
enum TextStyle: String, Sendable {
    case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", blue = "34", magenta = "35", cyan = "36"
    case boldRed = "1;31", boldGreen = "1;32", boldYellow = "1;33", boldCyan = "1;36"

    func apply(to text: String) -> String { "\u{1B}[\(rawValue)m\(text)\u{1B}[0m" }
}
