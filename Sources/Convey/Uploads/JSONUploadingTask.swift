import Foundation

/// A task that uploads any `Encodable` payload as JSON, encoded off the actor with the task's
/// `encoder` (by default the server's).
public protocol JSONUploadingTask: UploadingTask where UploadPayload: Encodable {}

extension JSONUploadingTask {
    public var requestBody: RequestBody? {
        get async throws {
            guard let uploadPayload else { return nil }
            let data = try await JSONBody.encode(uploadPayload, using: encoder)
            return try await uploadBody(data: data, contentType: "application/json")
        }
    }
}
