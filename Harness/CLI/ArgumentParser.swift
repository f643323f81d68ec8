/// A command line that could not be understood. `command` names the command whose help to suggest.
struct UsageError: Error, Sendable {
    let message: String
    let command: String?
}

/// The options and positional arguments of one command line, each option's values in the
/// order given.
struct ParsedArguments: Sendable {
    /// One option as given: which, and its value (empty for a flag).
    private struct Occurrence: Sendable {
        let key: String
        let value: String
    }

    /// Arguments that are not options, in order.
    private(set) var positionals: [String] = []
    private var occurrences: [Occurrence] = []

    /// Whether the option was given.
    func has(_ option: OptionSpec) -> Bool { occurrences.contains { $0.key == option.key } }
    /// The last value given for the option.
    func value(_ option: OptionSpec) -> String? { occurrences.last { $0.key == option.key }?.value }
    /// Every value given for a repeatable option, in order.
    func all(_ option: OptionSpec) -> [String] { occurrences.filter { $0.key == option.key }.map(\.value) }
    /// The values of several options in the order given on the command line, each with its option.
    func inOrder(_ options: [OptionSpec]) -> [(option: OptionSpec, value: String)] {
        occurrences.compactMap { occurrence in
            options.first { $0.key == occurrence.key }.map { ($0, occurrence.value) }
        }
    }

    /// Parses arguments as curl does: `--name value`, `--name=value`, `-n value`, `-nVALUE`,
    /// one-letter flags combined (`-fsSL`, the last one possibly taking a value: `-sSo FILE`),
    /// options anywhere, and `--` to end them. Anything else starting with `-` is an error.
    static func parse(_ arguments: [String], options: [OptionSpec], command: String?) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var rest = arguments[...]
        var optionsEnded = false
        while let argument = rest.popFirst() {
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
            } else if argument == "--" {
                optionsEnded = true
            } else if argument.hasPrefix("--") {
                var name = argument
                var attached: String?
                if let equals = argument.firstIndex(of: "=") {
                    name = String(argument[..<equals])
                    attached = String(argument[argument.index(after: equals)...])
                }
                guard let option = options.spelled(name) else { throw unknown(name, command: command) }
                if !option.takesValue, attached != nil {
                    throw UsageError(message: "option '\(name)' takes no value", command: command)
                }
                try parsed.take(option, spelled: name, attached: attached, rest: &rest, command: command)
            } else if let option = options.spelled(argument) {
                // `-H`, and single-dash long spellings such as `-fail-all-requests`.
                try parsed.take(option, spelled: argument, attached: nil, rest: &rest, command: command)
            } else {
                var letters = argument.dropFirst()
                while let letter = letters.popFirst() {
                    let name = "-" + String(letter)
                    guard let option = options.spelled(name) else { throw unknown(name, command: command) }
                    if option.takesValue {
                        try parsed.take(option, spelled: name, attached: letters.isEmpty ? nil : String(letters), rest: &rest, command: command)
                        break
                    }
                    parsed.occurrences.append(Occurrence(key: option.key, value: ""))
                }
            }
        }
        return parsed
    }

    /// Records `option` with its attached value, the next argument, or none for a flag.
    private mutating func take(_ option: OptionSpec, spelled name: String, attached: String?,
                               rest: inout ArraySlice<String>, command: String?) throws(UsageError) {
        guard let valueName = option.valueName else {
            occurrences.append(Occurrence(key: option.key, value: ""))
            return
        }
        guard let value = attached ?? rest.popFirst() else {
            throw UsageError(message: "option '\(name)' needs a value: \(name) \(valueName)", command: command)
        }
        occurrences.append(Occurrence(key: option.key, value: value))
    }

    /// The error for an option no list holds, saying what to use instead when curl has it. Only
    /// the option's name is repeated: the rest of the argument may be a value, such as a password.
    private static func unknown(_ name: String, command: String?) -> UsageError {
        let hint = CurlOnlyOptions.hint(for: name).map { " (curl's \(name): \($0))" } ?? ""
        return UsageError(message: "unknown option '\(name)'\(hint)", command: command)
    }
}
