/// How a harness option stands to curl's: `convey-harness help options` and Docs/harness.md
/// list every option with it.
enum CurlCounterpart: Sendable {
    /// curl has the option, and the harness gives it curl's meaning.
    case same
    /// curl has the option; the harness's meaning differs as the text says.
    case differs(String)
    /// curl has nothing of the kind: the harness's own long option. The text, if any, names
    /// what comes closest in curl.
    case harnessOnly(String?)

    /// curl has nothing of the kind, nor anything close.
    static let harnessOnly = CurlCounterpart.harnessOnly(nil)
}

/// One option: its spellings, its value, its help and how it stands to curl's.
///
/// Every option is a `static let` on `OptionSpec`, next to the command list that accepts it
/// (`RequestOptions.definingOptions`, `SendingOptions.options`, `OutputOptions.options`, …);
/// the code that acts on it reads it back with `ParsedArguments.has(.name)`, `value(.name)`
/// or `all(.name)`. Adding an option is its `static let` and its place in a list.
struct OptionSpec: Sendable {
    /// The spellings, such as `["-H", "--header"]`: one-letter ones can be combined (`-fsSL`).
    let names: [String]
    /// The placeholder for the value in help, or `nil` for a flag.
    let valueName: String?
    /// How the option stands to curl's.
    let curl: CurlCounterpart
    /// One line of help.
    let help: String

    init(_ names: [String], value valueName: String? = nil, curl: CurlCounterpart, help: String) {
        self.names = names
        self.valueName = valueName
        self.curl = curl
        self.help = help
    }

    /// What the parsed values are stored under: the last spelling, the long one when there is one.
    var key: String { names.last ?? "" }

    /// Whether the option takes a value.
    var takesValue: Bool { valueName != nil }

    /// `-H, --header 'NAME: VALUE'`.
    var synopsis: String {
        names.joined(separator: ", ") + (valueName.map { " " + $0 } ?? "")
    }
}

extension Array where Element == OptionSpec {
    /// The option spelled `name` exactly, if one is in the list.
    func spelled(_ name: String) -> OptionSpec? {
        first { $0.names.contains(name) }
    }

    /// Whether `argument`, given where an option may stand, takes the next argument as its value:
    /// `-o`, `--output`, or a cluster of one-letter options ending with one that takes a value (`-sSo`).
    func consumesNextArgument(_ argument: String) -> Bool {
        guard argument.hasPrefix("-"), argument != "-", argument != "--" else { return false }
        if argument.hasPrefix("--") {
            return !argument.contains("=") && spelled(argument)?.takesValue == true
        }
        if let option = spelled(argument) { return option.takesValue }
        // In a cluster, the first letter that takes a value takes the rest, or the next argument.
        for (offset, letter) in argument.dropFirst().enumerated() {
            guard let option = spelled("-" + String(letter)) else { return false }
            if option.takesValue { return offset == argument.count - 2 }
        }
        return false
    }
}
