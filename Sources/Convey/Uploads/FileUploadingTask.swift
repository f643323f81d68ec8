import Foundation

/// A task that uploads a file's bytes as the body, streamed from disk and never held in memory.
///
/// The file is checked (it exists, is a regular file, is readable) before anything is sent.
public protocol FileUploadingTask: UploadingTask where UploadPayload == URL {
    /// The `Content-Type` of the file. Default: `application/octet-stream`.
    var contentType: String { get }
}

extension FileUploadingTask {
    public var contentType: String { "application/octet-stream" }
    public var requestBody: RequestBody? {
        get async throws {
            guard let uploadPayload else { return nil }
            return try await UploadFile.requestBody(for: uploadPayload, contentType: contentType,
                                                    compression: uploadCompression, stagingDirectory: stagingDirectory)
        }
    }
}
