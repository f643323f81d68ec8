import Foundation

/// A task that uploads `multipart/form-data` parts: fields, bytes and files.
///
/// Small bodies whose parts are all in memory are sent from memory. Bodies of 4 MiB or more, and
/// every body with a file part, are written to a staged file in `stagingDirectory` in chunks and
/// streamed from there; the staged file is removed after the attempt, also on failure and cancellation.
public protocol MIMEUploadingTask: UploadingTask where UploadPayload == MIMEPayload {}

extension MIMEUploadingTask {
    public var requestBody: RequestBody? {
        get async throws {
            guard let uploadPayload else { return nil }
            return try await MultipartEncoder(parts: uploadPayload.parts, compression: uploadCompression,
                                              stagingDirectory: stagingDirectory).requestBody()
        }
    }
}
