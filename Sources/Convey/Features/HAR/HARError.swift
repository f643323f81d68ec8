/// Why a HAR file could not be read or written, or could not answer a request.
///
/// A request no entry answers fails the task with `unmatchedRequest` itself (the pipeline passes
/// it through unchanged, and never retries it); the other cases come from `HARFixtures.init` and
/// from writing. Every text is masked with `Redaction.standard`, as Convey's error descriptions are.
public enum HARError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No entry of the file answers this request: `request` is its method and masked URL
    /// (`GET https://api.example.com/users?page=2`), `reason` what came closest.
    case unmatchedRequest(request: String, file: String, reason: String)
    /// The file could not be read: missing, a link, not a regular file, or over the size limit.
    case unreadableFile(path: String, reason: String)
    /// The file is not HAR this reader accepts: `location` names the place (`log.entries[3].response.content.text`).
    case invalidFile(path: String, location: String, reason: String)
    /// The file could not be written; nothing was changed in it.
    case unwritableFile(path: String, reason: String)

    /// A sentence fit to show a person.
    public var userMessage: String? {
        switch self {
        case .unmatchedRequest: "This request has no recorded answer."
        case .unreadableFile, .invalidFile: "The recorded exchanges couldn't be read."
        case .unwritableFile: "The exchange couldn't be recorded."
        }
    }

    /// What went wrong, and where, credentials masked with `Redaction.standard`.
    public var logDetail: String {
        Redaction.standard.maskedText(unmaskedLogDetail)
    }

    /// `logDetail`.
    public var description: String { logDetail }

    private var unmaskedLogDetail: String {
        switch self {
        case .unmatchedRequest(let request, let file, let reason):
            // No colon right after the URL: the masking rule would read it as part of the URL.
            "No entry in \(file) answers \(request) — \(reason)"
        case .unreadableFile(let path, let reason):
            "Could not read the HAR file \(path): \(reason)"
        case .invalidFile(let path, let location, let reason):
            "\(path) is not a HAR file Convey can read: \(location): \(reason)"
        case .unwritableFile(let path, let reason):
            "Could not write the HAR file \(path): \(reason)"
        }
    }
}
