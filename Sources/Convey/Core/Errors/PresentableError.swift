/// An error that knows how to describe itself twice: once for a person, once for a log.
public protocol PresentableError: Error, CustomStringConvertible {
    /// A sentence fit to show a person, or `nil` when nothing should be shown (cancellation).
    var userMessage: String? { get }
    /// Everything a developer needs in one log line: what failed, where, and why.
    var logDetail: String { get }
}

extension PresentableError {
    public var description: String { logDetail }
}

extension Error {
    /// Whether this error only reports that the work was cancelled: a normal outcome, not a failure.
    public var isCancellation: Bool {
        if self is CancellationError { return true }
        if let error = self as? ConveyError, case .cancelled = error { return true }
        return false
    }

    /// A message fit to show a person, or `nil` for cancellation, which is never shown as an error.
    public var displayMessage: String? {
        if isCancellation { return nil }
        if let error = self as? any PresentableError { return error.userMessage }
        return "Something went wrong. Please try again."
    }
}
