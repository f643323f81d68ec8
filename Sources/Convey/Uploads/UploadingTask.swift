import Foundation

/// A task that sends a body built from its `uploadPayload`. Use one of the concrete kinds:
/// `DataUploadingTask`, `JSONUploadingTask`, `FormUploadingTask`, `MIMEUploadingTask` or
/// `FileUploadingTask`.
public protocol UploadingTask<UploadPayload>: DownloadingTask {
    /// What the body is made from.
    associatedtype UploadPayload: Sendable
    /// The payload to send; `nil` sends no body.
    var uploadPayload: UploadPayload? { get }
    /// The encoder for JSON payloads. Default: the server's `defaultEncoder`.
    var encoder: JSONEncoder { get }
    /// Whether the body is gzipped. Default: the server's `uploadCompression` (`.none` unless set).
    var uploadCompression: UploadCompression { get }
    /// Called as the body goes out, from any thread. Default: `nil`.
    var uploadProgressHandler: UploadProgressHandler? { get }
    /// Where bodies too large for memory (and multipart bodies with file parts) are staged while
    /// they are sent; each staged file is removed after its attempt. Default: the temporary directory.
    var stagingDirectory: URL { get }
}

extension UploadingTask {
    public var encoder: JSONEncoder { server.configuration.defaultEncoder }
    public var uploadCompression: UploadCompression { server.configuration.uploadCompression }
    public var uploadProgressHandler: UploadProgressHandler? { nil }
    public var stagingDirectory: URL { FileManager.default.temporaryDirectory }

    /// A body of bytes in memory, gzipped off the actor when `uploadCompression` applies to its size.
    func uploadBody(data: Data, contentType: String) async throws -> RequestBody {
        guard uploadCompression.applies(toSize: Int64(data.count)) else { return RequestBody(data: data, contentType: contentType) }
        return try await GzipSink.requestBody(compressing: data, contentType: contentType)
    }
}
