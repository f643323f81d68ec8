import Foundation

/// A task that sends a body built from its `uploadPayload`. Use one of the concrete kinds:
/// `DataUploadingTask`, `JSONUploadingTask`, `FormUploadingTask` or `MIMEUploadingTask`.
public protocol UploadingTask<UploadPayload>: DownloadingTask {
    /// What the body is made from.
    associatedtype UploadPayload: Sendable
    /// The payload to send; `nil` sends no body.
    var uploadPayload: UploadPayload? { get }
    /// The encoder for JSON payloads. Default: the server's `defaultEncoder`.
    var encoder: JSONEncoder { get }
}

extension UploadingTask {
    public var encoder: JSONEncoder { server.configuration.defaultEncoder }
}

/// A task that uploads raw bytes with a content type.
public protocol DataUploadingTask: UploadingTask where UploadPayload == Data {
    /// The `Content-Type` of the bytes. Default: `application/octet-stream`.
    var contentType: String { get }
}

extension DataUploadingTask {
    public var contentType: String { "application/octet-stream" }
    public var requestBody: RequestBody? {
        get async throws { uploadPayload.map { RequestBody(data: $0, contentType: contentType) } }
    }
}

/// A task that uploads any `Encodable` payload as JSON.
public protocol JSONUploadingTask: UploadingTask where UploadPayload: Encodable {}

extension JSONUploadingTask {
    public var requestBody: RequestBody? {
        get async throws {
            guard let uploadPayload else { return nil }
            let data = try await JSONBody.encode(uploadPayload, using: encoder)
            return RequestBody(data: data, contentType: "application/json")
        }
    }
}

/// A task that uploads fields as `application/x-www-form-urlencoded`.
public protocol FormUploadingTask: UploadingTask where UploadPayload == [String: String] {}

extension FormUploadingTask {
    public var requestBody: RequestBody? {
        get async throws {
            uploadPayload.map { RequestBody(data: Data(FormEncoding.encode($0).utf8), contentType: "application/x-www-form-urlencoded") }
        }
    }
}

/// A task that uploads `multipart/form-data` parts: fields and files.
public protocol MIMEUploadingTask: UploadingTask where UploadPayload == MIMEPayload {}

extension MIMEUploadingTask {
    public var requestBody: RequestBody? {
        get async throws {
            guard let uploadPayload else { return nil }
            return RequestBody(data: try uploadPayload.encoded(), contentType: uploadPayload.contentType)
        }
    }
}

/// JSON encoding of upload payloads, off the `ConveyActor`.
enum JSONBody {
    @concurrent
    static func encode<Payload: Encodable & Sendable>(_ payload: Payload, using encoder: JSONEncoder) async throws -> Data {
        do {
            return try encoder.encode(payload)
        } catch let error as EncodingError {
            let (path, reason): ([any CodingKey], String) = switch error {
            case .invalidValue(_, let context): (context.codingPath, context.debugDescription)
            @unknown default: ([], String(describing: error))
            }
            let place = path.map(\.stringValue).joined(separator: ".")
            throw ConveyError.encodingFailed(EncodingFailure(
                subject: String(describing: Payload.self) + (place.isEmpty ? "" : " at \(place)"), reason: reason))
        } catch {
            throw ConveyError.encodingFailed(EncodingFailure(subject: String(describing: Payload.self), reason: String(describing: error)))
        }
    }
}
