/// A failure before anything was sent, not caused by the command line's syntax: a file that
/// cannot be read, a record that does not exist. Exits with `ExitCode.localFailure`.
struct LocalFailure: Error, Sendable, CustomStringConvertible {
    let message: String

    var description: String { message }
}
