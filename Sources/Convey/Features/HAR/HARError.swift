/// Why a HAR file could not be read or written, inside the HAR readers and writers; apps see it
/// as `ConveyError.harFileUnusable` (`conveyError`). Every text is masked with `Redaction.standard`.
enum HARError: Error, Sendable, Hashable {
    /// The file could not be read: missing, a link, not a regular file, or over the size limit.
    case unreadableFile(path: String, reason: String)
    /// The file is not HAR this reader accepts: `location` names the place (`log.entries[3].response.content.text`).
    case invalidFile(path: String, location: String, reason: String)
    /// The file could not be written; nothing was changed in it.
    case unwritableFile(path: String, reason: String)

    /// The error as apps see it.
    var conveyError: ConveyError {
        switch self {
        case .unreadableFile(let path, let reason): .harFileUnusable(path: path, location: nil, reason: "could not read it: \(reason)")
        case .invalidFile(let path, let location, let reason): .harFileUnusable(path: path, location: location, reason: reason)
        case .unwritableFile(let path, let reason): .harFileUnusable(path: path, location: nil, reason: "could not write it: \(reason)")
        }
    }
}
