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
    /// The size from which the body is gzipped, in bytes before compression; `nil` sends it as it
    /// is. Default: the server's `uploadGzipMinimumSize` (`nil` unless set).
    var uploadGzipMinimumSize: Int? { get }
    /// Called as the body goes out, with the body bytes sent so far (after compression, when the
    /// body is gzipped) and the body's size on the wire when known. Called from a queue of its own,
    /// one report at a time, in order; a handler slower than the transfer sees the latest report
    /// rather than every step. Default: `nil`.
    var uploadProgressHandler: (@Sendable (_ bytesSent: Int64, _ totalBytes: Int64?) -> Void)? { get }
    /// Where bodies too large for memory (and multipart bodies with file parts) are staged while
    /// they are sent; each staged file is removed after its attempt. Default: the temporary directory.
    var stagingDirectory: URL { get }
}

extension UploadingTask {
    public var encoder: JSONEncoder { server.storedConfiguration.defaultEncoder }
    public var uploadGzipMinimumSize: Int? { server.storedConfiguration.uploadGzipMinimumSize }

    /// Whether, and from which size, the body is gzipped.
    var uploadCompression: UploadCompression { UploadCompression(gzipMinimumSize: uploadGzipMinimumSize) }
    public var uploadProgressHandler: (@Sendable (_ bytesSent: Int64, _ totalBytes: Int64?) -> Void)? { nil }
    public var stagingDirectory: URL { FileManager.default.temporaryDirectory }

    /// A body of bytes in memory, gzipped off the actor when `uploadCompression` applies to its size.
    func uploadBody(data: Data, contentType: String) async throws -> RequestBody {
        guard uploadCompression.applies(toSize: Int64(data.count)) else { return RequestBody(data: data, contentType: contentType) }
        return try await GzipSink.requestBody(compressing: data, contentType: contentType)
    }
}

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
