@_spi(Transport) @_spi(Tools) import Convey
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything about a request typed on the command line (or read from a record), except how its
/// body is made.
struct ManualRequest: Sendable {
    let server: HarnessServer
    let method: HTTPMethod
    let path: String
    let query: [URLQueryItem]
    let headers: Headers
    /// Names `-H 'NAME:'` takes out of the request as sent.
    let removedHeaders: [String]
    let echoStyle: TaskEchoStyle
    let configuration: TaskConfiguration
    let followsRedirects: Bool
    /// Which statuses end the run with an `HTTPError`: those `-f` and `--retry` ask for.
    var statusRule: StatusRule
    let retry: RetryOptions?
    /// Says each retry (unless `-s`), after the echo of the attempt it follows.
    let retryNotes: RetryNotes
    /// Filled in by `willSendRequest` with the request as sent.
    let sent = SentRequest()

    /// The URL the request is for, before Convey builds it (its path and query as given): what a
    /// run cancelled before anything was built names.
    @ConveyActor var url: URL? {
        guard let remote = server.remote, var components = URLComponents(string: remote.urlString(forPath: path)) else { return nil }
        if !query.isEmpty { components.queryItems = (components.queryItems ?? []) + query }
        return components.url
    }

    /// A request for `server` sent as `sending` says. `failsOnHTTPError` (`-f`) makes a status of
    /// 400 or more end the run, as `--retry` does with the statuses it retries.
    init(server: HarnessServer, method: HTTPMethod, path: String, query: [URLQueryItem], headers: Headers,
         sending: SendingOptions, failsOnHTTPError: Bool, retryNotes: RetryNotes) {
        self.server = server
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        removedHeaders = sending.removedHeaders
        echoStyle = sending.echo
        configuration = TaskConfiguration(timeout: sending.timeout, totalTimeout: sending.maxTime)
        followsRedirects = sending.followsRedirects
        statusRule = StatusRule(throwingClasses: failsOnHTTPError ? [.clientError, .serverError] : [],
                                throwingCodes: sending.retry == nil ? [] : RetryOptions.retriedStatuses)
        retry = sending.retry
        self.retryNotes = retryNotes
    }
}

/// A task sent from the command line. Its kinds differ only in the body: raw or multipart, so
/// that multipart bodies are encoded by Convey's own upload task.
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
    var configuration: TaskConfiguration? { request.configuration }
    var followsRedirects: Bool { request.followsRedirects }
    var statusRule: StatusRule { request.statusRule }

    func willSendRequest(request outgoing: OutgoingRequest) async throws -> OutgoingRequest {
        var outgoing = outgoing
        for name in request.removedHeaders { outgoing.fields.remove(named: name) }
        request.sent.request = outgoing
        request.server.hops?.reset()
        request.retryNotes.sayWaiting()
        return outgoing
    }

    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? {
        guard let retry = request.retry, let wait = retry.interval(after: error, count: count, method: method) else { return nil }
        request.retryNotes.note("\(Self.reason(error)): retry \(count) of \(retry.count) in \(DisplayFormat.duration(.milliseconds(Int64(wait * 1000))))")
        return wait
    }

    /// Why an attempt failed, in a few words for the retry notice: never a body or a credential.
    private static func reason(_ error: any Error) -> String {
        if let http = error as? HTTPError { return "HTTP \(http.statusCode) \(HTTPStatus.reasonPhrase(for: http.statusCode))" }
        if case .attemptTimedOut? = error as? ConveyError { return "timed out" }
        return "the request failed"
    }
}

/// A request with no body, or a raw one (`-d`, `--json`, `--data-binary`, a replayed body).
struct RawManualTask: ManualTask {
    let request: ManualRequest
    let body: RequestBody?

    var requestBody: RequestBody? {
        get async throws { body }
    }
}

/// A request with a `multipart/form-data` body (`-F`, `--form-string`).
struct MultipartManualTask: ManualTask, MIMEUploadingTask {
    let request: ManualRequest
    let uploadPayload: MIMEPayload?
}
