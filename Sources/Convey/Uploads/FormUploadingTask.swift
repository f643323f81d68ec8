import Foundation

/// A task that uploads fields as `application/x-www-form-urlencoded`, escaped by the WHATWG
/// rules and sorted by name.
public protocol FormUploadingTask: UploadingTask where UploadPayload == [String: String] {}

extension FormUploadingTask {
    public var requestBody: RequestBody? {
        get async throws {
            guard let uploadPayload else { return nil }
            return try await uploadBody(data: Data(FormEncoding.encode(uploadPayload).utf8), contentType: "application/x-www-form-urlencoded")
        }
    }
}
