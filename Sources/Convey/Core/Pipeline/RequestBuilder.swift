import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds the request for one attempt of a task: URL, method, layered headers, body.
@ConveyActor
enum RequestBuilder {
    /// The URL for a task: remote, path prefix and path joined, query parameters (sorted) then
    /// query items (in order) encoded. Only http and https, and only paths that stay under the
    /// remote's path and prefix.
    static func url(path: String, queryParameters: [String: String]?, queryItems: [URLQueryItem] = [], remote: Remote) throws(ConveyError) -> URL {
        if Remote.climbsOutOfPrefix(path) {
            throw .invalidURL(path, reason: "its \"..\" segments climb out of the remote's path prefix")
        }
        var text = remote.urlString(forPath: PercentEncoding.path(path))
        let query = PercentEncoding.query(queryParameters ?? [:], then: queryItems)
        if !query.isEmpty {
            text += (text.contains("?") ? "&" : "?") + query
        }
        return try recentURLs.url(for: text) { (text: String) throws(ConveyError) -> URL in
            guard let url = URL(string: text), url.host != nil else {
                throw ConveyError.invalidURL(text, reason: "it is not an absolute URL with a host")
            }
            guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                throw ConveyError.invalidURL(text, reason: "only http and https URLs are sent")
            }
            return url
        }
    }

    /// The URLs built lately, by their text: a task builds the same URL run after run, and
    /// Foundation's parse is the costliest part of building one.
    private static let recentURLs = RecentURLs()

    /// The request for one attempt, before `willSendRequest`: the run's template with what each
    /// attempt reads again, the task's `headers` (the server's `headers(for:)` among them, with
    /// its credentials) and its body.
    static func request<Task: DownloadingTask>(from template: RequestTemplate, for task: Task, body: RequestBody?) async throws -> OutgoingRequest {
        let method = template.method
        if body != nil, method.forbidsBody {
            throw ConveyError.encodingFailed(
                subject: "the body of a \(method) request", reason: "\(method) requests cannot carry a body; use POST or PUT")
        }
        let taskHeaders = try await task.headers
        var headers = Headers()
        headers.reserveCapacity(4 + template.defaultHeaders.count + taskHeaders.count)
        headers.appendLine(Header(name: "User-Agent", value: template.userAgent))
        if template.asksForIdentity { headers["Accept-Encoding"] = "identity" }
        headers.append(contentsOf: template.defaultHeaders)
        if let contentType = body?.contentType {
            try FieldValidation.check(name: "Content-Type", value: contentType, source: .body)
            headers["Content-Type"] = contentType
        }
        if let contentEncoding = body?.contentEncoding {
            try FieldValidation.check(name: "Content-Encoding", value: contentEncoding, source: .body)
            headers["Content-Encoding"] = contentEncoding
        }
        try FieldValidation.check(taskHeaders, source: .taskHeaders)
        headers.append(contentsOf: taskHeaders)

        var request = OutgoingRequest(method: method, url: template.url, fields: headers)
        if case .data(let data) = body?.content { request.body = data }
        return request
    }

    /// `request` with the user and password of its URL moved into `Authorization: Basic` (unless
    /// it has an `Authorization` of its own, which wins) and taken out of the URL, so that every
    /// transport sends the same request and the URL carries no credential into logs, records or
    /// cache keys. A URL without userinfo is left as it is.
    static func movingUserInfoToAuthorization(_ request: OutgoingRequest) -> OutgoingRequest {
        // Most URLs carry no user info: skip parsing them again on every request.
        let url = request.url
        guard url.user != nil || url.password != nil,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              components.percentEncodedUser != nil || components.percentEncodedPassword != nil else { return request }
        let credential = "\(components.user ?? ""):\(components.password ?? "")"
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        guard let stripped = components.url else { return request }
        var moved = request
        moved.url = stripped
        if moved.value(forHTTPHeaderField: "Authorization") == nil {
            moved.setValue("Basic " + Data(credential.utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        }
        return moved
    }
}

/// URLs by their text, at most `capacity` of them (all forgotten at once when full).
final class RecentURLs: Sendable {
    private let table = InlineLocked<[String: URL]>([:])
    private let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// The URL for `text`: a remembered one, or what `make` builds (remembered unless it throws).
    func url<Failure: Error>(for text: String, make: (String) throws(Failure) -> URL) throws(Failure) -> URL {
        if let known = table.withLock({ $0[text] }) { return known }
        let url = try make(text)
        table.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[text] = url
        }
        return url
    }
}

/// What every attempt's request starts from, read once per run so that a retry goes where the
/// first attempt went, however the server's settings change meanwhile: the URL (the remote, the
/// path and the query when the run started), the method, the `User-Agent` and default fields.
struct RequestTemplate: Sendable {
    let url: URL
    let method: HTTPMethod
    let userAgent: String
    let defaultHeaders: Headers
    /// Whether requests ask for `Accept-Encoding: identity` (`enableGZipDownloads` off).
    let asksForIdentity: Bool

    /// The template of a run of `task` on `server`, to `url` when the run has a URL of its own,
    /// else to the task's path under the server's remote; or why no request can be made: the
    /// server is disabled, it has no remote, the URL or a default field is invalid.
    @ConveyActor
    static func make<Task: DownloadingTask>(for task: Task, server: ConveyServer, url fixed: URL?) -> Result<RequestTemplate, ConveyError> {
        do throws(ConveyError) {
            if server.storedConfiguration.failsAllRequests { throw .requestsDisabledForDebugging }
            if server.disabled { throw .serverDisabled(server: server.name) }
            let url: URL
            if let fixed {
                url = fixed
            } else {
                guard let remote = server.remote else { throw .noRemote(server: server.name) }
                url = try RequestBuilder.url(path: task.path, queryParameters: task.queryParameters, queryItems: task.queryItems, remote: remote)
            }
            try FieldValidation.check(method: task.method, source: .taskMethod)
            let userAgent = server.storedConfiguration.userAgent ?? ServerConfiguration.standardUserAgent
            try FieldValidation.check(name: "User-Agent", value: userAgent, source: .userAgent)
            let defaultHeaders = server.storedConfiguration.defaultHeaders
            try FieldValidation.check(defaultHeaders, source: .defaultHeaders)
            return .success(RequestTemplate(url: url, method: task.method, userAgent: userAgent, defaultHeaders: defaultHeaders,
                                            asksForIdentity: !server.storedConfiguration.enableGZipDownloads))
        } catch {
            return .failure(error)
        }
    }
}
