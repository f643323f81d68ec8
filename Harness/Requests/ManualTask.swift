import Convey
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything about a request typed on the command line, except how its body is made.
struct ManualRequest: Sendable {
    let server: ConveyServer
    let method: HTTPMethod
    let path: String
    let query: [URLQueryItem]
    let headers: Headers
    let echoStyle: TaskEchoStyle
    let timeout: Duration?
    /// Filled in by `willSendRequest` with the request as sent.
    let sent = SentRequest()
}

/// A task sent from the command line. Its kinds differ only in the body: raw, form or multipart,
/// so that form and multipart bodies are encoded by Convey's own upload tasks.
protocol ManualTask: DownloadingTask where DownloadPayload == Data {
    var request: ManualRequest { get }
}

extension ManualTask {
    var server: ConveyServer { request.server }
    var path: String { request.path }
    var method: HTTPMethod { request.method }
    var queryItems: [URLQueryItem] { request.query }
    var headers: Headers {
        get async throws {
            var headers = try await server.headers(for: self)
            headers.append(contentsOf: request.headers)
            return headers
        }
    }
    var echoStyle: TaskEchoStyle { request.echoStyle }
    var configuration: TaskConfiguration? { request.timeout.map { TaskConfiguration(timeout: $0) } }

    func willSendRequest(request outgoing: OutgoingRequest) async throws -> OutgoingRequest {
        request.sent.request = outgoing
        return outgoing
    }
}

/// A request with no body, or a raw one (`--json-body`, `--data`, a replayed body).
struct RawManualTask: ManualTask {
    let request: ManualRequest
    let body: RequestBody?

    var requestBody: RequestBody? {
        get async throws { body }
    }
}

/// A request with an `application/x-www-form-urlencoded` body (`--form`).
struct FormManualTask: ManualTask, FormUploadingTask {
    let request: ManualRequest
    let uploadPayload: [String: String]?
}

/// A request with a `multipart/form-data` body (`--file`, with any `--form` fields).
struct MultipartManualTask: ManualTask, MIMEUploadingTask {
    let request: ManualRequest
    let uploadPayload: MIMEPayload?
}
