import Foundation

/// A task that uploads raw bytes with a content type.
public protocol DataUploadingTask: UploadingTask where UploadPayload == Data {
    /// The `Content-Type` of the bytes. Default: `application/octet-stream`.
    var contentType: String { get }
}

extension DataUploadingTask {
    public var contentType: String { "application/octet-stream" }
    public var requestBody: RequestBody? {
        get async throws {
            guard let uploadPayload else { return nil }
            return try await uploadBody(data: uploadPayload, contentType: contentType)
        }
    }
}
