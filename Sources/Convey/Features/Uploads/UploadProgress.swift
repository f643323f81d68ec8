import Foundation

/// How much of a request body has gone out.
public struct UploadProgress: Sendable, Hashable {
    /// Body bytes sent so far (after compression, when the body is gzipped).
    public var bytesSent: Int64
    /// The body's size on the wire, when known.
    public var totalBytes: Int64?

    /// Creates a progress report.
    public init(bytesSent: Int64, totalBytes: Int64?) {
        self.bytesSent = bytesSent
        self.totalBytes = totalBytes
    }

    /// `bytesSent / totalBytes`, from 0 to 1; `nil` while the size is unknown.
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(bytesSent) / Double(totalBytes))
    }
}

/// Receives upload progress as the body goes out, from any thread.
public typealias UploadProgressHandler = @Sendable (UploadProgress) -> Void

/// Passes a transport's progress on to a task's `uploadProgressHandler`: the upload side only,
/// and only when it changed.
final class UploadProgressRelay: @unchecked Sendable {
    private let handler: UploadProgressHandler
    private let lock = NSLock()
    private var last: UploadProgress?

    init(handler: @escaping UploadProgressHandler) {
        self.handler = handler
    }

    /// The transport progress callback for a task: `nil` unless it is an upload task with a handler.
    @ConveyActor
    static func transportHandler<Task: DownloadingTask>(for task: Task) -> (@Sendable (TransferProgress) -> Void)? {
        guard let handler = (task as? any UploadingTask)?.uploadProgressHandler else { return nil }
        return UploadProgressRelay(handler: handler).report
    }

    func report(_ transfer: TransferProgress) {
        guard transfer.bytesSent > 0 || transfer.totalBytesToSend != nil else { return }
        let progress = UploadProgress(bytesSent: transfer.bytesSent, totalBytes: transfer.totalBytesToSend)
        let changed = lock.withLock {
            guard last != progress else { return false }
            last = progress
            return true
        }
        if changed { handler(progress) }
    }
}
