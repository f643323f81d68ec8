import Foundation

/// A task whose response body goes to a file: streamed to disk as it arrives, with flat memory,
/// put in place only when complete and verified, and resumed after a broken transfer.
///
/// ```swift
/// struct FetchModel: FileDownloadingTask {
///     var path: String { "models/large.bin" }
///     var destination: URL { URL(fileURLWithPath: "/tmp/large.bin") }
/// }
/// let response = try await FetchModel().download()   // response.payload is the destination
/// ```
///
/// Any task can also download to a file with `download(to:resuming:progress:)`.
public protocol FileDownloadingTask: DownloadingTask where DownloadPayload == URL {
    /// Where the finished file goes. An existing file there is replaced once the download is complete.
    var destination: URL { get }
    /// Whether a partial file left by a broken transfer is resumed. Default: `true`.
    var resumesPartialDownloads: Bool { get }
    /// Called as bytes are written, with the bytes of the file written so far (a resumed part
    /// included) and the whole file's size when the server announced it, from the writer's queue,
    /// never the transport's thread. Default: `nil`.
    var downloadProgressHandler: (@Sendable (_ bytesWritten: Int64, _ totalBytes: Int64?) -> Void)? { get }
    /// The permissions the finished file gets, as an octal mode: `0o644` for read by all.
    /// Default: `0o600`, read and write for the owner only.
    var downloadedFilePermissions: Int { get }
}

extension FileDownloadingTask {
    public var resumesPartialDownloads: Bool { true }
    public var downloadProgressHandler: (@Sendable (_ bytesWritten: Int64, _ totalBytes: Int64?) -> Void)? { nil }
    public var downloadedFilePermissions: Int { 0o600 }

    /// Downloads the body to `destination` and returns it as the payload. Throws as `download(to:)`
    /// does. The file is this task's own payload, so a success calls `didFinish(with:)` (before
    /// `didSucceed(with:)`), as `download()` does for any task.
    @discardableResult
    public nonisolated func download() async throws -> ServerResponse<URL> {
        try await TaskRunner(task: self).run(await fileDelivery())
    }

    /// The delivery of this task's own file.
    private func fileDelivery() -> FileDelivery {
        var delivery = FileDelivery(destination: destination, resumes: resumesPartialDownloads, permissions: downloadedFilePermissions,
                                    progress: DownloadProgress.handler(downloadProgressHandler))
        delivery.didFinish = { response in await Hooks.call(.didFinish, of: Self.self) { await didFinish(with: response) } }
        return delivery
    }
}

extension DownloadingTask {
    /// Runs the task with its response body streamed to a file, and returns the file's URL as
    /// the payload.
    ///
    /// The body goes to `<destination>.convey-partial` and replaces `destination` in one step once
    /// complete and its length verified. A missing folder is created (owner-only). When a transfer
    /// breaks (a failure, a cancellation, a timeout), the partial file stays; the next attempt or
    /// run sends `Range` with `If-Range` (the strong `ETag`, else `Last-Modified`) and appends a
    /// `206` only when it provably continues the same version, or starts over on a `200`.
    /// Nothing half-written ever sits at `destination`, and one download per destination runs at
    /// a time: a second one fails at once. Files are never opened through a link.
    ///
    /// Requests ask for `Accept-Encoding: identity`; the cache is bypassed, and the in-memory
    /// size limit does not apply. Throws `HTTPError` for a status the task's `statusRule` makes an
    /// error (the partial file is kept); the body of a status it returns goes to the file.
    /// Throws `ConveyError.downloadFailed` when the file cannot be written, verified or moved,
    /// when a `206` does not continue the partial file, or when another download to the same
    /// destination is running.
    ///
    /// - Parameters:
    ///   - destination: where the finished file goes; an existing file there is replaced.
    ///   - resuming: whether a partial file left by a broken transfer is resumed. Default: `true`.
    ///   - permissions: the finished file's permissions, as an octal mode (`0o644` for read by
    ///     all); a value outside `0o000`–`0o777` fails with `ConveyError.downloadFailed`.
    ///     Default: `0o600`, read and write for the owner only.
    ///   - progress: called as bytes are written, with the bytes of the file written so far and the
    ///     whole file's size when known, from the writer's queue.
    ///
    /// The file is not the task's payload, so a success calls `didSucceed(with:)` but not
    /// `didFinish(with:)`.
    @discardableResult
    public nonisolated func download(to destination: URL, resuming: Bool = true, permissions: Int = 0o600,
                         progress: (@Sendable (_ bytesWritten: Int64, _ totalBytes: Int64?) -> Void)? = nil) async throws -> ServerResponse<URL> {
        try await TaskRunner(task: self).run(FileDelivery(destination: destination, resumes: resuming, permissions: permissions,
                                                          progress: DownloadProgress.handler(progress)))
    }
}
