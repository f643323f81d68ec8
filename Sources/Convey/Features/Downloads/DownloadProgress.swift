/// How much of a download is on disk.
public struct DownloadProgress: Sendable, Hashable {
    /// Bytes of the file written so far, a resumed part included.
    public var bytesWritten: Int64
    /// The whole file's size, when the server announced it.
    public var totalBytes: Int64?

    /// Creates a progress report.
    public init(bytesWritten: Int64, totalBytes: Int64?) {
        self.bytesWritten = bytesWritten
        self.totalBytes = totalBytes
    }

    /// `bytesWritten / totalBytes`, from 0 to 1; `nil` while the size is unknown.
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(bytesWritten) / Double(totalBytes))
    }
}

/// Receives download progress as the body is written (the type of `FileDownloadingTask.downloadProgressHandler`).
typealias DownloadProgressHandler = @Sendable (DownloadProgress) -> Void
