/// One option a command accepts: a flag, or an option that takes a value.
struct OptionSpec: Sendable {
    /// The spellings, such as `["-H", "--header"]`.
    let names: [String]
    /// The key the parsed value is stored under.
    let key: String
    /// The placeholder for the value in help, or `nil` for a flag.
    let valueName: String?
    /// One line of help.
    let help: String

    init(_ names: [String], key: String? = nil, value valueName: String? = nil, help: String) {
        self.names = names
        self.key = key ?? names.last.map { String($0.drop { $0 == "-" }) } ?? ""
        self.valueName = valueName
        self.help = help
    }

    /// `-H, --header 'NAME: VALUE'`.
    var synopsis: String {
        names.joined(separator: ", ") + (valueName.map { " " + $0 } ?? "")
    }
}

/// A command line that could not be understood. `command` names the command whose help to suggest.
struct UsageError: Error, Sendable {
    let message: String
    let command: String?
}

/// The options and positional arguments of one command line.
struct ParsedArguments: Sendable {
    /// Arguments that are not options, in order.
    private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]

    /// Whether a flag or option was given.
    func has(_ key: String) -> Bool { values[key] != nil }
    /// The last value given for an option.
    func value(_ key: String) -> String? { values[key]?.last }
    /// Every value given for a repeatable option, in order.
    func all(_ key: String) -> [String] { values[key] ?? [] }

    /// Parses arguments the way common tools do: `--name value`, `--name=value`, `-n value`,
    /// flags anywhere, and `--` to end options. Anything else starting with `-` is an error.
    static func parse(_ arguments: some Sequence<String>, options: [OptionSpec], command: String?) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var iterator = arguments.makeIterator()
        var optionsEnded = false
        while let argument = iterator.next() {
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var name = argument
            var attached: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                attached = String(argument[argument.index(after: equals)...])
            }
            guard let option = options.first(where: { $0.names.contains(name) }) else {
                throw UsageError(message: "unknown option '\(name)'", command: command)
            }
            if let valueName = option.valueName {
                guard let value = attached ?? iterator.next() else {
                    throw UsageError(message: "option '\(name)' needs a value: \(name) \(valueName)", command: command)
                }
                parsed.values[option.key, default: []].append(value)
            } else {
                if attached != nil { throw UsageError(message: "option '\(name)' takes no value", command: command) }
                parsed.values[option.key, default: []].append("")
            }
        }
        return parsed
    }
}
