/// How much of a download is on disk: what the writer reports to the handler.
struct DownloadProgress: Sendable, Hashable {
    /// Bytes of the file written so far, a resumed part included.
    var bytesWritten: Int64
    /// The whole file's size, when the server announced it.
    var totalBytes: Int64?

    /// Creates a progress report.
    init(bytesWritten: Int64, totalBytes: Int64?) {
        self.bytesWritten = bytesWritten
        self.totalBytes = totalBytes
    }

    /// `bytesWritten / totalBytes`, from 0 to 1; `nil` while the size is unknown.
    var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(bytesWritten) / Double(totalBytes))
    }
}

/// Receives download progress as the body is written.
typealias DownloadProgressHandler = @Sendable (DownloadProgress) -> Void

extension DownloadProgress {
    /// The internal handler that calls an app's `(bytesWritten, totalBytes)` handler.
    static func handler(_ handler: (@Sendable (_ bytesWritten: Int64, _ totalBytes: Int64?) -> Void)?) -> DownloadProgressHandler? {
        guard let handler else { return nil }
        return { @Sendable progress in handler(progress.bytesWritten, progress.totalBytes) }
    }
}
