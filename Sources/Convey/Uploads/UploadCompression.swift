/// Whether request bodies are gzipped before they are sent (`Content-Encoding: gzip`).
///
/// Only for servers that accept compressed requests (many do not), so the default is `.none`.
/// Set it for every task with `ServerConfiguration.uploadCompression`, or per task with
/// `UploadingTask.uploadCompression`.
public enum UploadCompression: Sendable, Hashable {
    /// Bodies are sent as they are.
    case none
    /// Bodies of at least `minimumSize` bytes (before compression) are gzipped through the system
    /// zlib; smaller ones are sent as they are, where gzip's overhead outweighs the saving.
    case gzip(minimumSize: Int)

    /// Whether a body of `size` bytes is compressed.
    func applies(toSize size: Int64) -> Bool {
        switch self {
        case .none: false
        case .gzip(let minimumSize): size >= Int64(minimumSize)
        }
    }

    /// The `Content-Encoding` of a gzipped body.
    static let gzipEncoding = "gzip"
}
