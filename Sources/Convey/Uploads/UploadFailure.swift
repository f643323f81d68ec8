extension ConveyError {
    /// An `encodingFailed` error for an upload body: what could not be produced (a payload, a
    /// part, a file, the staged body), and why.
    static func upload(_ subject: String, _ reason: String) -> ConveyError {
        .encodingFailed(EncodingFailure(subject: subject, reason: reason))
    }
}
