@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// The top level: finds the command, parses its options, and runs it.
enum Harness {
    static let version = "convey-harness \(conveyVersion) (Convey \(conveyVersion))"

    static let commands: [Command] = [DemoCommand.command]
        + [HTTPMethod.get, .post, .put, .patch, .delete].map(RequestCommand.command(for:))
        + [RecordedCommand.command, ReplayCommand.command, OutboxCommand.command, TLSCommand.command, WebSocketCommand.command]

    static var overview: String {
        let entries = commands.map { ($0.name, $0.summary) } + [("help [COMMAND|options]", "Shows help for a command, or every option beside curl's.")]
        let width = (entries.map(\.0.count).max() ?? 0) + 2
        let list = entries.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count) + $0.1 }
        return """
            Usage: convey-harness COMMAND [options]
                   convey-harness URL... [options]      (a GET of each URL, as curl)

            Runs Convey tasks by hand and shows what went on the wire.

            Commands:
            \(list.joined(separator: "\n"))

            Start with: convey-harness demo
            Every command takes --help; 'convey-harness help options' lists every option beside curl's.

            Global options:
            \(Command.table(HarnessSettings.globalOptions + [.version]))
            \(ExitCode.table)
            """
    }

    /// Runs a command line (without the program name) and returns the exit code.
    static func run(_ arguments: [String]) async -> ExitCode {
        let console = Console(color: .auto)
        guard let commandIndex = commandIndex(in: arguments) else {
            return topLevel(arguments, console: console)
        }
        var name = arguments[commandIndex]
        var rest = arguments
        if Self.isURL(name) {
            // `convey-harness https://…` as a curl user types it: a GET of that URL.
            name = "get"
        } else {
            rest.remove(at: commandIndex)
        }
        if name == "help" {
            return help(for: rest.filter { !$0.hasPrefix("-") }, console: console)
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            return console.report(UsageError(message: "unknown command '\(name)': try one of \(commands.map(\.name).joined(separator: ", "))", command: nil))
        }
        do throws(UsageError) {
            let parsed = try ParsedArguments.parse(rest, options: command.allOptions, command: command.name)
            if parsed.has(.help) {
                console.out(command.help)
                return .ok
            }
            let settings = try HarnessSettings(parsed, command: command.name)
            return await command.run(parsed, settings)
        } catch {
            return console.report(error)
        }
    }

    /// Whether `argument` is an http(s) URL rather than a command's name.
    private static func isURL(_ argument: String) -> Bool {
        let lowered = argument.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    /// The index of the first argument that is neither an option nor the value of one: options
    /// of any command may come before it (`convey-harness -sS get URL`).
    private static func commandIndex(in arguments: [String]) -> Int? {
        let options = commands.flatMap(\.allOptions)
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { return index + 1 < arguments.count ? index + 1 : nil }
            if !argument.hasPrefix("-") || argument == "-" { return index }
            index += options.consumesNextArgument(argument) ? 2 : 1
        }
        return nil
    }

    /// `convey-harness`, `--help`, `--version`, or global options alone.
    private static func topLevel(_ arguments: [String], console: Console) -> ExitCode {
        let options = HarnessSettings.globalOptions + [.version]
        do throws(UsageError) {
            let parsed = try ParsedArguments.parse(arguments, options: options, command: nil)
            if parsed.has(.version) {
                console.out(version)
                return .ok
            }
            if parsed.has(.help) {
                console.out(overview)
                return .ok
            }
        } catch {
            return console.report(error)
        }
        console.err(overview)
        return .usage
    }

    private static func help(for names: [String], console: Console) -> ExitCode {
        guard let name = names.first else {
            console.out(overview)
            return .ok
        }
        if name == "options" {
            console.out(OptionsHelp.text(commands: commands))
            return .ok
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            return console.report(UsageError(message: "unknown command '\(name)'", command: nil))
        }
        console.out(command.help)
        return .ok
    }
}
